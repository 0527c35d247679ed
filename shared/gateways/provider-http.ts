import { OutcomeUnknown, ProviderUnreachable } from "./connector.ts";

/**
 * One HTTP call to a payment provider, as every connector makes it: a timeout on the whole call,
 * and its failures told apart by what they mean for the money.
 *
 * - The request never left (connection refused, unknown host, TCP connect timeout): nothing can have
 *   happened, so {@link ProviderUnreachable} (the payments core settles the operation as not done).
 * - Sent, and then no answer (the timeout, a connection cut while waiting): it may have happened, so
 *   {@link OutcomeUnknown} (the operation stays reserved until the provider's record tells).
 * - An answer, whatever its status: returned, for the connector to read.
 */
export interface ProviderRequest {
  url: string;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  headers: Record<string, string>;
  body?: string;
  /** The whole call, connection included. */
  timeoutMs: number;
}

export interface ProviderAnswer {
  status: number;
  /** The body parsed as JSON; the raw text when it is not JSON. */
  body: unknown;
}

/**
 * Every provider call's time limit: 8 s (Stripe and Adyen answer within seconds), so that a call
 * ends, and its outcome is settled or kept reserved, well within a payment function's 10 s; or
 * `PROVIDER_TIMEOUT_MS` from the deployment.
 */
export function providerTimeoutMs(): number {
  const configured = Number(process.env.PROVIDER_TIMEOUT_MS);
  return Number.isInteger(configured) && configured > 0 ? configured : 8_000;
}

/** Error codes of a connection that was never made: nothing reached the provider. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_INVALID_URL",
]);

export async function callProvider(request: ProviderRequest): Promise<ProviderAnswer> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      redirect: "manual",
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    throw classified(error, request);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    // The provider answered and the body was cut: it decided, but we cannot tell what.
    throw new OutcomeUnknown(`The answer of ${describe(request)} was cut: ${messageOf(error)}`);
  }
  return { status: response.status, body: parsed(text) };
}

function classified(error: unknown, request: ProviderRequest): Error {
  const code = codeOf(error);
  // fetch refuses some ports outright ("bad port"): nothing left either.
  const refusedByFetch = (error as { cause?: { message?: unknown } })?.cause?.message === "bad port";
  if ((code !== undefined && NOT_SENT.has(code)) || refusedByFetch) {
    return new ProviderUnreachable(`${describe(request)} could not be sent (${code})`);
  }
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return new OutcomeUnknown(`${describe(request)} got no answer within ${request.timeoutMs} ms`);
  }
  return new OutcomeUnknown(`${describe(request)} failed after it was sent: ${messageOf(error)}`);
}

/** undici reports the system error as the `cause` of its `fetch failed`, sometimes one level deeper. */
function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function parsed(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The call without its query string, which could carry data. */
function describe(request: ProviderRequest): string {
  return `${request.method} ${request.url.split("?")[0]}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
