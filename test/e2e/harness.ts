/**
 * Helpers for end-to-end tests over real HTTP.
 *
 * - `startStack()` runs the real `npm start` entry (`tsx lib/local/start.ts`) as a child process on
 *   a free port with a fresh DATA_DIR, using the test run's DynamoDB (see test/setup/global-setup.ts)
 *   unless asked to start its own, and resolves once it prints `listening on …`.
 * - `api(url, credentials)` is a small HTTP client with Basic auth, for that stack or for an
 *   in-process `createLocalApi()` server.
 *
 *   const stack = await startStack();
 *   const sandbox = api(stack.url, stack.credentials.sandbox);
 *   const { status, body } = await sandbox.post("/customers", { first_name: "Ada" });
 *   await stack.stop();
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import qs from "qs";
import { afterAll, beforeAll, inject } from "vitest";
import { close, createLocalApi, type LocalApiOptions, listen } from "../../lib/local/http-server.ts";
import { repoRoot } from "../../lib/local/paths.ts";
import {
  createProject,
  type EnvironmentCredentials,
  type ProjectCredentials,
} from "../../shared/projects/project.ts";

const TSX_CLI = join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs");
const START_ENTRY = "lib/local/start.ts";
const READY_LINE = /^listening on (http:\/\/localhost:\d+)$/m;
const START_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 15_000;

export interface StartStackOptions {
  /** Use (and keep) this DATA_DIR, e.g. to restart on the same data. Default: a fresh temp dir, removed by `stop()`. */
  dataDir?: string;
  /**
   * `shared` (default): the test run's DynamoDB Local, so no Java start per stack.
   * `own`: no DYNAMODB_ENDPOINT, the stack starts DynamoDB Local itself in `DATA_DIR/dynamodb`, as `npm start` does.
   */
  dynamodb?: "shared" | "own";
  /** Extra environment variables for the stack process. */
  env?: Record<string, string>;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningStack {
  /** `http://localhost:<port>` */
  url: string;
  /** The local project's credentials, read from `DATA_DIR/credentials.json`. */
  credentials: ProjectCredentials;
  dataDir: string;
  /** The stack's process (the `tsx` launcher, which relays signals to the stack). */
  process: ChildProcess;
  /** Everything the stack printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM (or `signal`), then waits for the exit; removes the temp DATA_DIR it created. */
  stop(signal?: NodeJS.Signals): Promise<ExitStatus>;
}

/** Stacks still running when the worker exits are stopped, so no test leaves a server behind. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGTERM");
});

export async function startStack(options: StartStackOptions = {}): Promise<RunningStack> {
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "payment-api-stack-")));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0", DATA_DIR: dataDir, ...options.env };
  if (options.dynamodb === "own") {
    delete env.DYNAMODB_ENDPOINT;
    delete env.TABLE_NAME;
  } else {
    env.DYNAMODB_ENDPOINT = inject("dynamodbEndpoint");
    env.TABLE_NAME = inject("tableName");
  }

  const child = spawn(process.execPath, [TSX_CLI, START_ENTRY], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const exited = new Promise<ExitStatus>((done) => {
    child.once("exit", (code, signal) => {
      running.delete(child);
      done({ code, signal });
    });
  });

  const stop = async (signal: NodeJS.Signals = "SIGTERM"): Promise<ExitStatus> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    const status = await exited;
    clearTimeout(timer);
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    return status;
  };

  try {
    const url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`The stack did not start within ${START_TIMEOUT_MS / 1000} s.\n${output}`)),
        START_TIMEOUT_MS,
      );
      const check = () => {
        const ready = READY_LINE.exec(output)?.[1];
        if (ready) {
          clearTimeout(timer);
          child.stdout?.off("data", check);
          done(ready);
        }
      };
      child.stdout?.on("data", check);
      void exited.then((status) => {
        clearTimeout(timer);
        fail(new Error(`The stack exited during start-up (${JSON.stringify(status)}).\n${output}`));
      });
    });
    const credentials = JSON.parse(
      await readFile(join(dataDir, "credentials.json"), "utf8"),
    ) as ProjectCredentials;
    return { url, credentials, dataDir, process: child, output: () => output, stop };
  } catch (error) {
    await stop("SIGKILL");
    throw error;
  }
}

export interface RequestOptions {
  /** Send the body form-encoded (`a[b]=c`, as client libraries do) instead of JSON. */
  form?: boolean;
  /** Content type of a string body (default: form-encoded with `form`, else JSON). */
  contentType?: string;
  /** Sent as the `Idempotency-Key` header (an empty string sends an empty header). */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body (the raw text when it is not JSON). Tests read it field by field. */
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
  body: any;
  text: string;
}

/** Request body: an object (encoded as JSON, or as a form with `form: true`) or a string sent as is. */
export type RequestBody = Record<string, unknown> | string;

export interface Client {
  get(path: string, options?: RequestOptions): Promise<ApiResponse>;
  post(path: string, body?: RequestBody, options?: RequestOptions): Promise<ApiResponse>;
  put(path: string, body?: RequestBody, options?: RequestOptions): Promise<ApiResponse>;
  del(path: string, options?: RequestOptions): Promise<ApiResponse>;
}

/** A client for the API at `url`, authenticating with HTTP Basic as `credentials` (none if omitted). */
export function api(url: string, credentials?: EnvironmentCredentials): Client {
  const authorization = credentials
    ? `Basic ${Buffer.from(`${credentials.project_id}:${credentials.private_key}`).toString("base64")}`
    : undefined;

  async function send(
    method: string,
    path: string,
    body: RequestBody | undefined,
    options: RequestOptions = {},
  ) {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (authorization) headers.authorization = authorization;
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
    let payload: string | undefined;
    if (body !== undefined) {
      headers["content-type"] =
        options.contentType ?? (options.form ? "application/x-www-form-urlencoded" : "application/json");
      if (typeof body === "string") payload = body;
      else payload = options.form ? qs.stringify(body) : JSON.stringify(body);
    }
    const response = await fetch(new URL(path, url), { method, headers, body: payload });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the test sees the text.
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  return {
    get: (path, options) => send("GET", path, undefined, options),
    post: (path, body, options) => send("POST", path, body ?? {}, options),
    put: (path, body, options) => send("PUT", path, body ?? {}, options),
    del: (path, options) => send("DELETE", path, undefined, options),
  };
}

export interface InProcessApi {
  /** `http://localhost:<port>`, once the file's `beforeAll` ran. */
  readonly url: string;
  /** A project created for this file: every key is scoped by project, so files never share data. */
  readonly project: ProjectCredentials;
  /** Clients of the project's sandbox and live environments (usable from the tests on). */
  readonly sandbox: Client;
  readonly live: Client;
}

/**
 * Serves the API from this test process for the tests of the calling file (`beforeAll` /
 * `afterAll`), through the same API Gateway event translation as the local stack. The handlers
 * run in the test's own process, so a test can spy on what they call to inject a fault.
 */
export function useInProcessApi(
  projectName: string,
  options: Pick<LocalApiOptions, "roundTrips" | "meteringRoundTrips"> = {},
): InProcessApi {
  let server: Server | undefined;
  let state: { url: string; project: ProjectCredentials; sandbox: Client; live: Client } | undefined;
  const ready = () => {
    if (!state)
      throw new Error("useInProcessApi: the API is available from the tests on, not at import time.");
    return state;
  };
  beforeAll(async () => {
    server = createLocalApi(options);
    const url = `http://localhost:${await listen(server, 0)}`;
    // Links the API hands out (3DS pages, checkout pages) point at this server, as in the local stack.
    process.env.API_URL = url;
    const project = await createProject(projectName);
    state = { url, project, sandbox: api(url, project.sandbox), live: api(url, project.live) };
  });
  afterAll(async () => {
    if (server) await close(server);
  });
  const lazyClient = (pick: (ready: { sandbox: Client; live: Client }) => Client): Client => ({
    get: (path, options) => pick(ready()).get(path, options),
    post: (path, body, options) => pick(ready()).post(path, body, options),
    put: (path, body, options) => pick(ready()).put(path, body, options),
    del: (path, options) => pick(ready()).del(path, options),
  });
  return {
    get url() {
      return ready().url;
    },
    get project() {
      return ready().project;
    },
    sandbox: lazyClient((s) => s.sandbox),
    live: lazyClient((s) => s.live),
  };
}
