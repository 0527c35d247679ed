import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { resolve } from "node:path";
import { projectRoot } from "../../lib/bundling.ts";

/**
 * The providers' own test doubles beside the project (`../shared/tools`, see its README), for the
 * connectors' contract tests: Stripe's official mock and Adyen's OpenAPI document. A checkout
 * without them skips those tests, saying why.
 */
export const PROVIDER_TOOLS = resolve(projectRoot, "..", "shared", "tools");
export const STRIPE_MOCK = resolve(PROVIDER_TOOLS, "stripe-mock", "stripe-mock");
export const ADYEN_CHECKOUT_OPENAPI = resolve(PROVIDER_TOOLS, "adyen", "CheckoutService-v71.json");
/** Prism (`@stoplight/prism-cli`, a dev dependency) serves an OpenAPI document as a validating mock. */
export const PRISM = resolve(projectRoot, "node_modules", ".bin", "prism");

/** A port nothing listens on now (the kernel's choice), for a tool that must be told one. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Why a tool cannot be used here, or undefined when it can. */
export function missingTool(path: string): string | undefined {
  return existsSync(path)
    ? undefined
    : `${path} is absent: the providers' test doubles are not beside this checkout`;
}

export interface RunningTool {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a tool and waits for the line that says where it listens (`pattern`'s first group is the
 * address); fails after `timeoutMs` with what it printed.
 */
export function startTool(
  command: string,
  args: string[],
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<RunningTool> {
  return new Promise((resolveStarted, reject) => {
    const child: ChildProcess = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not start within ${timeoutMs} ms:\n${printed}`));
    }, timeoutMs);
    const read = (chunk: Buffer) => {
      printed += chunk.toString("utf8");
      const match = pattern.exec(printed);
      if (!match) return;
      clearTimeout(timer);
      resolveStarted({
        url: match[1] as string,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it listened:\n${printed}`));
    });
  });
}
