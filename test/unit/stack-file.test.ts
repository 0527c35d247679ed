import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { processIsAlive, processStartTime } from "../../lib/local/stack-file.ts";

/** A process state from `/proc/<pid>/stat` (after the command name, which may hold spaces). */
const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];

/**
 * A zombie: a child of `sleep`, which never reaps its children. The shell starts a short `sleep` in
 * the background, prints its pid, and becomes the long `sleep` itself; the child ends after that
 * (a child that ended before the `exec` could be reaped by the shell, and leave no zombie).
 */
async function zombie(): Promise<{ pid: number; release(): void }> {
  const parent = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 30"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const pid = await new Promise<number>((done) =>
    parent.stdout.once("data", (chunk: Buffer) => done(Number(chunk))),
  );
  for (let tries = 0; stateOf(pid) !== "Z" && tries < 300; tries += 1) await sleep(10);
  return { pid, release: () => parent.kill("SIGKILL") };
}

describe.runIf(process.platform === "linux")("processIsAlive", () => {
  it("says a running process runs, with or without its start time", () => {
    expect(processIsAlive(process.pid)).toBe(true);
    expect(processIsAlive(process.pid, processStartTime(process.pid))).toBe(true);
  });

  it("counts a zombie as gone, although kill(pid, 0) still reaches it", async () => {
    const dead = await zombie();
    try {
      expect(stateOf(dead.pid)).toBe("Z");
      expect(() => process.kill(dead.pid, 0)).not.toThrow();
      expect(processIsAlive(dead.pid)).toBe(false);
    } finally {
      dead.release();
    }
  });

  it("counts a pid that another process has taken since as gone (its start time differs)", () => {
    const recorded = String(Number(processStartTime(process.pid)) - 1);
    expect(processIsAlive(process.pid, recorded)).toBe(false);
  });

  it("counts a pid nobody has as gone", async () => {
    const child = spawn("true");
    await new Promise((done) => child.once("exit", done));
    expect(processIsAlive(child.pid as number)).toBe(false);
  });
});
