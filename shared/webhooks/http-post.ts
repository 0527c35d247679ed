import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import {
  bareHost,
  checkWebhookUrl,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
  type WebhookUrlPolicy,
} from "./url-policy.ts";

/** A receiver has this long, DNS included, to answer; then the attempt fails. */
export const DELIVERY_TIMEOUT_MS = 5_000;
/** How much of a receiver's answer is kept with the attempt. */
export const RESPONSE_BODY_LIMIT = 1024;
export const USER_AGENT = "payment-api-webhooks/1.0";

/** What one POST to a receiver gave: a 2xx is a success, anything else (or no answer) a failure. */
export interface PostOutcome {
  ok: boolean;
  statusCode: number | null;
  /** Why there is no usable answer: refused by the URL policy, timeout, connection error. */
  error: string | null;
  responseBody: string | null;
  durationMs: number;
}

export interface PostOptions {
  policy: WebhookUrlPolicy;
  resolve?: Resolver;
  timeoutMs?: number;
}

class Timeout extends Error {}

/**
 * POSTs `body` (JSON) to `target` after checking the URL against `policy`: the host is resolved,
 * every address checked, and the connection goes to a checked address (the request's `lookup`
 * answers with them), so a DNS answer that changes between the check and the connection cannot
 * steer the request elsewhere. Redirects are not followed: a 3xx is a failure like any non-2xx.
 * Never throws: every failure is an outcome.
 */
export async function postWebhook(
  target: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  options: PostOptions,
): Promise<PostOutcome> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Timeout());
    }, timeoutMs);
  });
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string): PostOutcome => ({
    ok: false,
    statusCode: null,
    error,
    responseBody: null,
    durationMs: elapsed(),
  });

  try {
    const check = await Promise.race([
      checkWebhookUrl(target, options.policy, options.resolve ?? systemResolver),
      deadline,
    ]);
    if (!check.allowed) return failed(`refused: webhook URL ${check.reason}`);
    const answer = await Promise.race([
      send(check.url, check.addresses, body, headers, controller.signal),
      deadline,
    ]);
    return {
      ok: answer.statusCode >= 200 && answer.statusCode < 300,
      statusCode: answer.statusCode,
      error: null,
      responseBody: answer.body,
      durationMs: elapsed(),
    };
  } catch (error) {
    if (error instanceof Timeout) return failed(`timed out after ${timeoutMs} ms`);
    return failed(describeError(error));
  } finally {
    clearTimeout(timer);
  }
}

/** Node calls this instead of DNS for the connection: it may only use the checked addresses. */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const usable = addresses.filter(({ family }) => !options.family || options.family === family);
    const [first] = usable;
    if (!first) {
      const error: NodeJS.ErrnoException = new Error("no checked address of the requested family");
      error.code = "ENOTFOUND";
      callback(error, "", 0);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}

function send(
  url: URL,
  addresses: readonly ResolvedAddress[],
  body: string,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<{ statusCode: number; body: string }> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        protocol: url.protocol,
        host: bareHost(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "user-agent": USER_AGENT,
        },
        lookup: pinnedLookup(addresses),
        // A fresh connection per delivery: a pooled socket would outlive the check that allowed it.
        agent: false,
        signal,
      },
      (response) => readCapped(response).then(resolve, reject),
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** The status and the first {@link RESPONSE_BODY_LIMIT} bytes of the answer; the rest is not read. */
function readCapped(response: IncomingMessage): Promise<{ statusCode: number; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8");
      resolve({ statusCode: response.statusCode ?? 0, body: text });
    };
    response.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_BODY_LIMIT) {
        response.destroy();
        finish();
      }
    });
    response.on("end", finish);
    response.on("error", (error) => (size >= RESPONSE_BODY_LIMIT ? finish() : reject(error)));
  });
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET") return "connection reset by the receiver";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `host name could not be resolved (${code})`;
  if (typeof code === "string" && /CERT|TLS|SSL/.test(code)) return `TLS failure (${code})`;
  return `request failed${code ? ` (${code})` : ""}: ${error instanceof Error ? error.message : String(error)}`;
}
