/**
 * Test support for webhooks: the API and the background work (fauxqs queues, the stream poller and
 * the delivery worker) in the test's own process, on a table of the calling file's own, and
 * receivers on loopback.
 *
 * The table is the file's own because the stream poller reads every record of its table: on the
 * shared test table, the background work of other files (and of `npm start` child processes) would
 * race this file's for its events. Everything else (DynamoDB Local, the handlers) is shared.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, inject } from "vitest";
import { type BackgroundWork, startBackgroundWork } from "../../lib/local/background.ts";
import { close, listen } from "../../lib/local/http-server.ts";
import { type InProcessApi, useInProcessApi } from "../e2e/harness.ts";
import { useOwnTable } from "./own-table.ts";

export interface WebhookStack {
  api: InProcessApi;
  /** The background work, once the file's `beforeAll` ran. */
  readonly background: BackgroundWork;
  readonly tableName: string;
  /** What the pollers reported (a failed batch read again, …), instead of printing it. */
  readonly errors: string[];
}

/**
 * Serves the API and runs the background work for the calling file, on a table named after
 * `name`. Call it at the top of the file, before anything else registers hooks that use the table.
 */
export function useWebhookStack(name: string): WebhookStack {
  const tableName = useOwnTable(name);
  let background: BackgroundWork | undefined;
  const errors: string[] = [];

  const api = useInProcessApi(name);
  beforeAll(async () => {
    background = await startBackgroundWork({
      dynamodbEndpoint: inject("dynamodbEndpoint"),
      tableName,
      errorLog: (message) => errors.push(message),
    });
  });
  afterAll(async () => {
    await background?.stop();
  });

  return {
    api,
    get background() {
      if (!background)
        throw new Error("useWebhookStack: the background work starts in the file's beforeAll.");
      return background;
    },
    tableName,
    errors,
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>/hooks/<name>` */
  url: string;
  requests: ReceivedRequest[];
  /** The status the next request gets, given how many came before it (default: 200). */
  respond: (previous: number) => number;
  /** Resolves once `count` requests arrived (polls; fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A webhook receiver on loopback that records every request and answers as told. */
export async function startReceiver(name = "receiver"): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: Partial<Receiver> & { respond: (previous: number) => number } = { respond: () => 200 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const status = receiver.respond(requests.length);
      requests.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: performance.now(),
      });
      response.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "not now");
    });
  });
  const port = await listen(server, 0);
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks/${name}`,
    requests,
    async waitFor(count: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`${name}: ${requests.length} of ${count} requests after ${timeoutMs} ms`);
        }
        await new Promise((done) => setTimeout(done, 20));
      }
      return requests;
    },
    close: () => close(server),
  }) as Receiver;
}

/** Polls `read` until `accept` holds for its value (fails after `timeoutMs`). */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`Condition not met after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}
