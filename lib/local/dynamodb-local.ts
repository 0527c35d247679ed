import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import { delimiter, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import pinned from "../../scripts/dynamodb-local.json" with { type: "json" };
import { repoRoot } from "./paths.ts";

/**
 * DynamoDB Local, AWS's own DynamoDB implementation (a Java program), as a child process of the
 * local stack and of the test run. `scripts/fetch-dynamodb-local.mjs` (npm's postinstall) puts the
 * jar in `.cache/dynamodb-local/<version>/`, the version pinned in `scripts/dynamodb-local.json`.
 */
export const DYNAMODB_LOCAL_VERSION = pinned.version;
export const DYNAMODB_LOCAL_DIR = join(repoRoot, ".cache", "dynamodb-local", DYNAMODB_LOCAL_VERSION);

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
/** How much of Java's output is kept to explain a failed start. */
const OUTPUT_TAIL_CHARS = 4_000;
const PORT_ATTEMPTS = 3;
/**
 * C1 compiler only: measured here, DynamoDB Local answers sooner (about 2.2 s instead of 3.8-5 s
 * on 2 busy cores) and is no slower on this workload, as C2's compile threads no longer compete.
 */
export const DEFAULT_JVM_OPTIONS: readonly string[] = ["-XX:TieredStopAtLevel=1"];

export interface DynamoDbLocalOptions {
  /** Directory of the database file (kept across restarts); without it the data lives in memory. */
  dbPath?: string;
  /** Default: a free port. */
  port?: number;
  startTimeoutMs?: number;
  /** JVM options before `-jar`. Default {@link DEFAULT_JVM_OPTIONS}. */
  jvmOptions?: readonly string[];
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`: the value for `AWS_ENDPOINT_URL_DYNAMODB`. */
  endpoint: string;
  port: number;
  /** Process id of the Java process. */
  pid: number;
  /** Stops Java and resolves once it has exited. Safe to call more than once. */
  stop(): Promise<void>;
  /** Settles when Java exits, whether `stop()` ended it or it died on its own. */
  exited: Promise<JavaExit>;
}

export interface JavaExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines Java printed (kept for an exit nobody asked for). */
  output: string;
}

/** Thrown when DynamoDB Local cannot start; the message says what to do about it. */
export class DynamoDbLocalError extends Error {
  override name = "DynamoDbLocalError";
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const jar = join(DYNAMODB_LOCAL_DIR, "DynamoDBLocal.jar");
  if (!existsSync(jar)) {
    throw new DynamoDbLocalError(
      `DynamoDB Local is not installed (${jar} is missing). Run \`npm install\`: its postinstall step ` +
        "(scripts/fetch-dynamodb-local.mjs) downloads it.",
    );
  }
  const java = javaCommand();
  if (!java) throw javaMissing("java");
  if (options.dbPath) await mkdir(options.dbPath, { recursive: true });

  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freePort());
    try {
      return await launch(java, jar, port, options);
    } catch (error) {
      if (!(error instanceof PortInUse)) throw error;
      // Another process may take the free port between our probe and Java's bind: try another one.
      if (options.port !== undefined || attempt >= PORT_ATTEMPTS) throw new DynamoDbLocalError(error.message);
    }
  }
}

class PortInUse extends Error {}

async function launch(
  java: string,
  jar: string,
  port: number,
  options: DynamoDbLocalOptions,
): Promise<DynamoDbLocal> {
  const storage = options.dbPath ? ["-dbPath", resolve(options.dbPath)] : ["-inMemory"];
  // -sharedDb: one database whatever the caller's access key and region (otherwise DynamoDB Local
  // keeps a database per key, and a client with other dummy credentials would see no tables).
  const javaArgs = [
    ...(options.jvmOptions ?? DEFAULT_JVM_OPTIONS),
    `-Djava.library.path=${join(DYNAMODB_LOCAL_DIR, "DynamoDBLocal_lib")}`,
    "-jar",
    jar,
    "-port",
    String(port),
    ...storage,
    "-sharedDb",
    "-disableTelemetry",
  ];
  const [command, args] = withParentDeathSignal(java, javaArgs);
  const child = spawn(command, args, {
    cwd: DYNAMODB_LOCAL_DIR,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: a Ctrl-C in the terminal reaches us, and we stop Java after the
    // HTTP server, instead of Java dying under requests still in flight.
    detached: true,
  });
  track(child);

  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (done) => {
      child.once("exit", (code, signal) => done({ code, signal }));
      child.once("error", (error) => done({ code: null, signal: null, error }));
    },
  );
  const endpoint = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    untrack(child);
  };

  const failure = exited.then(({ code, signal, error }) => {
    if ((error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return javaMissing(java);
    if (/BindException|Address already in use/i.test(output)) {
      return new PortInUse(`DynamoDB Local could not listen on port ${port}: it is in use.`);
    }
    return new DynamoDbLocalError(
      `DynamoDB Local exited during start-up (${error?.message ?? `exit code ${code}, signal ${signal}`}).` +
        describeOutput(output),
    );
  });

  const timeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  const ready = waitUntilAnswering(endpoint, timeoutMs);
  const outcome = await Promise.race([ready, failure]);
  if (outcome instanceof Error) {
    await stop();
    throw outcome;
  }
  if (outcome === "timeout") {
    await stop();
    throw new DynamoDbLocalError(
      `DynamoDB Local did not answer on ${endpoint} within ${timeoutMs / 1000} s.${describeOutput(output)}`,
    );
  }
  // Once up, Java's chatter is not needed any more; keep the pipes drained so it never blocks.
  child.stdout?.off("data", keep);
  child.stderr?.off("data", keep);
  child.stdout?.resume();
  // After start-up only the tail of stderr is kept, to explain an unexpected exit.
  let stderrTail = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
  });
  const javaExit = exited.then(({ code, signal }) => ({ code, signal, output: stderrTail }));
  return { endpoint, port, pid: child.pid as number, stop, exited: javaExit };
}

/** Polls ListTables with a short backoff until DynamoDB Local answers, or the time is up. */
async function waitUntilAnswering(endpoint: string, timeoutMs: number): Promise<"ready" | "timeout"> {
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
  });
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  try {
    while (Date.now() < deadline) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(1_000) });
        return "ready";
      } catch {
        await sleep(delay);
        delay = Math.min(delay * 2, 250);
      }
    }
    return "timeout";
  } finally {
    client.destroy();
  }
}

function describeOutput(output: string): string {
  const text = output.trim();
  return text ? `\nJava's output:\n${text}` : "";
}

function javaMissing(command: string) {
  return new DynamoDbLocalError(
    `Java is not installed (\`${command}\` was not found), and DynamoDB Local is a Java program. ` +
      "Install Java 17 or newer: on Debian/Ubuntu `apt-get install -y openjdk-17-jre-headless`, " +
      "elsewhere any Java 17+ runtime (and put it on the PATH or set JAVA_HOME).",
  );
}

/** `$JAVA_HOME/bin/java` when set, else `java` from the PATH; undefined when there is none. */
function javaCommand(): string | undefined {
  const executable = process.platform === "win32" ? "java.exe" : "java";
  const home = process.env.JAVA_HOME;
  if (home && existsSync(join(home, "bin", executable))) return join(home, "bin", executable);
  const onPath = (process.env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, executable))
    .find((candidate) => existsSync(candidate));
  return onPath;
}

/**
 * On Linux, `setpriv --pdeathsig KILL` makes the kernel kill Java when its parent dies, even when
 * the parent is killed with SIGKILL and cannot clean up. `setpriv` execs Java: the pid is Java's.
 */
const SETPRIV = "/usr/bin/setpriv";
function withParentDeathSignal(command: string, args: string[]): [string, string[]] {
  if (process.platform === "linux" && existsSync(SETPRIV)) {
    return [SETPRIV, ["--pdeathsig", "KILL", "--", command, ...args]];
  }
  return [command, args];
}

/** Every running Java child, killed when this process exits however it exits. */
const running = new Set<ChildProcess>();
const killAll = () => {
  for (const child of running) child.kill("SIGKILL");
};

function track(child: ChildProcess) {
  if (running.size === 0) process.on("exit", killAll);
  running.add(child);
  child.once("exit", () => untrack(child));
}

function untrack(child: ChildProcess) {
  running.delete(child);
  if (running.size === 0) process.off("exit", killAll);
}

/** A port nobody listens on right now (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}
