import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EXPORTS_DIR_VARIABLE } from "../../shared/exports/names.ts";
import { BROWSER_ASSETS_DIR_VARIABLE } from "../../shared/http/assets.ts";
import { sendMetricsTo } from "../../shared/observability/metrics.ts";
import type { ProjectCredentials } from "../../shared/projects/project.ts";
import { buildBrowserAssets } from "../browser-assets.ts";
import { type BackgroundWork, startBackgroundWork } from "./background.ts";
import { type DynamoDbLocal, DynamoDbLocalError, startDynamoDbLocal } from "./dynamodb-local.ts";
import { close, createLocalApi, type LocalApiOptions, listen } from "./http-server.ts";
import { createLocalMetrics, LOCAL_METRICS_PATH, type LocalMetrics } from "./metrics.ts";
import type { LocalScheduler } from "./scheduler.ts";
import {
  LOCAL_STACK_FILE,
  type LocalStackFile,
  processStartTime,
  readLocalStackFile,
  stackIsRunning,
  useLocalTable,
} from "./stack-file.ts";
import { ensureTable } from "./table.ts";

/**
 * `npm start`: the whole API on this machine, from the same route table and handlers as the
 * deployment. DynamoDB Local (Java) keeps the data under `DATA_DIR`; the first start creates a
 * project and writes its credentials to `DATA_DIR/credentials.json`.
 *
 * Nothing here may import `shared/config.ts` (directly or through a handler) before the
 * environment is set: handlers read it once, at import. That is why the project code and the
 * handlers are imported dynamically.
 */

export const DEFAULT_PORT = 3000;
export const DEFAULT_DATA_DIR = ".data";
export const DEFAULT_TABLE_NAME = "payment-api-local";
export const CREDENTIALS_FILE = "credentials.json";
const LOCAL_PROJECT_NAME = "Local project";

export interface LocalStackOptions {
  /** HTTP port; 0 picks a free one. Default 3000. */
  port?: number;
  /** Where the data, the credentials and the running stack's address are kept. Default `.data`. */
  dataDir?: string;
  /** An already running DynamoDB to use instead of starting DynamoDB Local (the tests' one). */
  dynamodbEndpoint?: string;
  /** Default: `TABLE_NAME` from the environment, else `payment-api-local`. */
  tableName?: string;
  /** Progress, credentials and the `listening on` line. Default `console.log`. */
  log?: (line: string) => void;
  /** Log one line per HTTP request. Default false. */
  accessLog?: boolean;
  /** The DynamoDB round trips each request made on its own path (the benchmark's figures). */
  roundTrips?: LocalApiOptions["roundTrips"];
  /** With `roundTrips`: requests are metered only while this answers true (default: always). */
  meteringRoundTrips?: LocalApiOptions["meteringRoundTrips"];
  /**
   * DynamoDB Local died while the stack was running: the stack has stopped itself.
   * Default: the error is logged with `console.error`.
   */
  onFailure?: (error: Error) => void;
}

export interface LocalStack {
  /** `http://localhost:<port>` */
  url: string;
  port: number;
  credentials: ProjectCredentials;
  /** The credentials came from an earlier start's `credentials.json`. */
  credentialsReused: boolean;
  tableName: string;
  dynamodbEndpoint: string;
  dataDir: string;
  /** Queues, stream and queue pollers: webhook fan-out and delivery (`lib/local/background.ts`). */
  background: BackgroundWork;
  /** Fires the jobs scheduled in the table (`auto_capture_at` captures) when due (`lib/local/scheduler.ts`). */
  scheduler: LocalScheduler;
  /**
   * The business metrics the functions printed since the start, added up (`lib/local/metrics.ts`);
   * also served as text on `GET /local/metrics`.
   */
  metrics: LocalMetrics;
  /**
   * Closes the HTTP server, stops the background work, stops DynamoDB Local (when it started it)
   * and removes `local-stack.json`.
   */
  stop(): Promise<void>;
}

/**
 * Starts the local stack in this process. The handlers share the process environment, so a
 * process runs one local stack at a time (a second one would reuse the first one's table name).
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const log = options.log ?? ((line: string) => console.log(line));
  const dataDir = resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const tableName = options.tableName ?? process.env.TABLE_NAME ?? DEFAULT_TABLE_NAME;
  const stackFile = join(dataDir, LOCAL_STACK_FILE);
  await mkdir(dataDir, { recursive: true });
  await refuseSecondStack(stackFile);

  let server: Server | undefined;
  let dynamodb: DynamoDbLocal | undefined;
  let background: BackgroundWork | undefined;
  let scheduler: LocalScheduler | undefined;
  let browserAssets: string | undefined;
  let wroteStackFile = false;
  let stopped: Promise<void> | undefined;
  // The functions' EMF lines come here instead of stdout (the handlers run in this process).
  const metrics = createLocalMetrics();
  sendMetricsTo(metrics.collect);
  const stop = () => {
    stopped ??= (async () => {
      if (server) await close(server);
      await scheduler?.stop();
      await background?.stop();
      sendMetricsTo(undefined);
      await dynamodb?.stop();
      if (browserAssets) await rm(browserAssets, { recursive: true, force: true });
      if (wroteStackFile) await rm(stackFile, { force: true });
    })();
    return stopped;
  };

  let markReady = () => {};
  const ready = new Promise<void>((done) => {
    markReady = done;
  });
  try {
    // Listen first: a busy port fails at once, before Java spends seconds starting.
    server = createLocalApi({
      ready,
      ...(options.accessLog ? { accessLog: log } : {}),
      ...(options.roundTrips ? { roundTrips: options.roundTrips } : {}),
      ...(options.meteringRoundTrips ? { meteringRoundTrips: options.meteringRoundTrips } : {}),
      localPages: { [LOCAL_METRICS_PATH]: () => metrics.page() },
    });
    const port = await listenOrExplain(server, options.port ?? DEFAULT_PORT);
    const url = `http://localhost:${port}`;

    if (!options.dynamodbEndpoint) {
      const started = await startDynamoDbLocal({ dbPath: join(dataDir, "dynamodb") });
      dynamodb = started;
      void started.exited.then(({ code, signal, output }) => {
        if (stopped) return;
        const error = new LocalStackError(
          `DynamoDB Local exited unexpectedly (exit code ${code}, signal ${signal}); the local stack stopped.` +
            (output.trim() ? `\nJava's output:\n${output.trim()}` : ""),
        );
        void stop().then(() => (options.onFailure ?? ((failure) => console.error(failure.message)))(error));
      });
    }
    const dynamodbEndpoint = options.dynamodbEndpoint ?? (dynamodb as DynamoDbLocal).endpoint;
    configureEnvironment({ tableName, dynamodbEndpoint, url });
    process.env.CARD_KEY_FILE = join(dataDir, "card-keys.json");
    // Export files (shared/exports/storage): a folder of the data directory, as the bucket is in AWS.
    process.env[EXPORTS_DIR_VARIABLE] ??= join(dataDir, "exports");
    // The scripts served to browsers (`GET /assets/…`), built from this checkout's sources.
    browserAssets = await mkdtemp(join(tmpdir(), "payment-api-browser-"));
    await buildBrowserAssets(browserAssets);
    process.env[BROWSER_ASSETS_DIR_VARIABLE] = browserAssets;

    const client = new DynamoDBClient({ endpoint: dynamodbEndpoint });
    try {
      await ensureTable(client, tableName);
    } finally {
      client.destroy();
    }
    background = await startBackgroundWork({ dynamodbEndpoint, tableName, dataDir });
    const { createLocalScheduler } = await import("./scheduler.ts");
    scheduler = createLocalScheduler();
    scheduler.start();

    const { credentials, reused } = await localProjectCredentials(dataDir, log);
    const startTime = processStartTime(process.pid);
    const running: LocalStackFile = {
      dynamodb_endpoint: dynamodbEndpoint,
      table_name: tableName,
      api_url: url,
      pid: process.pid,
      ...(startTime ? { pid_start_time: startTime } : {}),
      ...(dynamodb ? { dynamodb_pid: dynamodb.pid } : {}),
    };
    await writeFile(stackFile, `${JSON.stringify(running, null, 2)}\n`);
    wroteStackFile = true;

    markReady();
    log(`listening on ${url}`);
    return {
      url,
      port,
      credentials,
      credentialsReused: reused,
      tableName,
      dynamodbEndpoint,
      dataDir,
      background,
      scheduler,
      metrics,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What the handlers read, set before any of them (or `shared/config.ts`) is imported. */
function configureEnvironment(settings: { tableName: string; dynamodbEndpoint: string; url: string }) {
  useLocalTable(settings.tableName, settings.dynamodbEndpoint);
  const env = process.env;
  // The address this stack serves, so links the API hands out (3DS challenge pages, invoices' checkout
  // pages) point at it.
  env.API_URL = settings.url;
  env.POWERTOOLS_SERVICE_NAME ??= "payment-api";
  env.LOG_LEVEL ??= "WARN";
}

/** Two stacks on one DATA_DIR would share DynamoDB Local's database file. */
async function refuseSecondStack(stackFile: string) {
  const running = await readLocalStackFile(stackFile);
  if (running && running.pid !== process.pid && stackIsRunning(running)) {
    throw new LocalStackError(
      `A local stack is already running on this DATA_DIR (pid ${running.pid}, ${running.api_url}). ` +
        "Stop it first, or start this one with another DATA_DIR.",
    );
  }
}

async function listenOrExplain(server: Server, port: number): Promise<number> {
  try {
    return await listen(server, port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new LocalStackError(`Port ${port} is in use: start with another PORT (PORT=0 picks a free one).`);
    }
    throw error;
  }
}

/**
 * The local project's credentials: those of `credentials.json` while the database still knows
 * them, else a new project (first start, or the data was deleted since).
 */
async function localProjectCredentials(
  dataDir: string,
  log: (line: string) => void,
): Promise<{ credentials: ProjectCredentials; reused: boolean }> {
  const { createProject } = await import("../../shared/projects/project.ts");
  const { findEnvironment } = await import("../../shared/projects/environment.ts");
  const { matchingKey } = await import("../../shared/projects/keys.ts");
  const file = join(dataDir, CREDENTIALS_FILE);
  const shown = displayPath(file);

  const saved = await readCredentials(file);
  if (saved) {
    const stillValid = await Promise.all(
      [saved.sandbox, saved.live].map(async ({ project_id, private_key }) => {
        const environment = await findEnvironment(project_id);
        return environment !== undefined && matchingKey(environment, private_key) !== undefined;
      }),
    );
    if (stillValid.every(Boolean)) {
      log(`Reusing the local project's credentials from ${shown}:`);
      log(describeCredentials(saved));
      return { credentials: saved, reused: true };
    }
    log(
      `The project in ${shown} is not in the database any more (was ${displayPath(join(dataDir, "dynamodb"))} ` +
        "deleted?): its credentials are dead. Creating a new project and rewriting the file.",
    );
  } else if (existsSync(file)) {
    log(`${shown} is not a credentials file this stack wrote: creating a new project and rewriting it.`);
  }

  const credentials = await createProject(LOCAL_PROJECT_NAME);
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  log(`Created the project "${LOCAL_PROJECT_NAME}"; its credentials (also in ${shown}):`);
  log(describeCredentials(credentials));
  return { credentials, reused: false };
}

async function readCredentials(file: string): Promise<ProjectCredentials | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return undefined;
  }
  const pair = (value: unknown) => {
    const candidate = value as Partial<Record<"project_id" | "private_key", unknown>> | undefined;
    return typeof candidate?.project_id === "string" && typeof candidate.private_key === "string"
      ? { project_id: candidate.project_id, private_key: candidate.private_key }
      : undefined;
  };
  const sandbox = pair((parsed as { sandbox?: unknown } | null)?.sandbox);
  const live = pair((parsed as { live?: unknown } | null)?.live);
  return sandbox && live ? { sandbox, live } : undefined;
}

function describeCredentials({ sandbox, live }: ProjectCredentials): string {
  return [
    `  sandbox  project id   ${sandbox.project_id}`,
    `           private key  ${sandbox.private_key}`,
    `  live     project id   ${live.project_id}`,
    `           private key  ${live.private_key}`,
  ].join("\n");
}

function displayPath(file: string): string {
  const fromHere = relative(process.cwd(), file);
  return fromHere && !fromHere.startsWith("..") && !isAbsolute(fromHere) ? fromHere : file;
}

/** A start-up failure with a message that says what to do; printed without a stack trace. */
export class LocalStackError extends Error {
  override name = "LocalStackError";
}

// ---- `npm start` ------------------------------------------------------------------------------

function settingsFromEnvironment(): LocalStackOptions {
  const env = process.env;
  const port = env.PORT === undefined || env.PORT === "" ? DEFAULT_PORT : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new LocalStackError(`PORT must be a port number (0 picks a free one), not "${env.PORT}".`);
  }
  return {
    port,
    dataDir: env.DATA_DIR || DEFAULT_DATA_DIR,
    tableName: env.TABLE_NAME || DEFAULT_TABLE_NAME,
    accessLog: true,
    ...(env.DYNAMODB_ENDPOINT ? { dynamodbEndpoint: env.DYNAMODB_ENDPOINT } : {}),
  };
}

async function main() {
  let stack: LocalStack | undefined;
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    // Still starting: exiting kills DynamoDB Local (see dynamodb-local.ts) and nothing else is open.
    if (!stack) process.exit(0);
    await stack.stop();
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, shutdown);

  try {
    stack = await startLocalStack({
      ...settingsFromEnvironment(),
      onFailure: (error) => {
        console.error(error.message);
        process.exit(1);
      },
    });
  } catch (error) {
    const known = error instanceof LocalStackError || error instanceof DynamoDbLocalError;
    console.error(known ? `Cannot start the local stack: ${error.message}` : error);
    process.exit(1);
  }
}

const invokedPath = process.argv[1];
if (invokedPath && import.meta.url === pathToFileURL(realpathSync(invokedPath)).href) {
  await main();
}
