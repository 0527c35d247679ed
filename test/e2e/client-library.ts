import { expect } from "vitest";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Requests as the official server-side clients send them (`../shared/reference/client-compatibility.md`),
 * for end-to-end tests against a running stack: Node omits unset keys, Python, PHP and Ruby send them
 * as null in JSON bodies; Python writes unset query options as `None` and booleans as `True`/`False`,
 * PHP leaves nulls out and writes booleans as `1`/`0` (`http_build_query`); both put a `?` after every
 * GET and DELETE path, options or not. PHP declares a JSON body on every request, GET included.
 */
export type Style = "node" | "python" | "php" | "ruby";
export const STYLES: Style[] = ["node", "python", "php", "ruby"];
// biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
export type Json = any;

/** Options a client puts in the query string of a GET or DELETE. */
export type QueryOptions = Record<string, string | number | boolean | null>;

/** A query value as each client writes it; undefined: left out (PHP's and Node's nulls). */
function queryValue(style: Style, value: string | number | boolean | null): string | undefined {
  if (style === "python") {
    // `urlencode` writes Python's own literals.
    if (value === null) return "None";
    if (typeof value === "boolean") return value ? "True" : "False";
    return String(value);
  }
  if (value === null) return undefined;
  // PHP's `http_build_query` writes booleans as 1 and 0.
  if (style === "php" && typeof value === "boolean") return value ? "1" : "0";
  return String(value);
}

function queryString(style: Style, options: QueryOptions): string {
  const pairs = Object.entries(options).flatMap(([key, value]): Array<[string, string]> => {
    const written = queryValue(style, value);
    return written === undefined ? [] : [[key, written]];
  });
  return new URLSearchParams(pairs).toString();
}

/** A client library's request: its body keys (null when unset but Node's), its query options, its headers. */
export function clientLibrary(
  baseUrl: string,
  style: Style,
  credentials: { project_id: string; private_key: string },
) {
  const headers = {
    authorization: basicAuthorization(credentials.project_id, credentials.private_key),
    "user-agent": `processout-${style}/1.0`,
    "api-version": "1.4.0.0",
    accept: style === "php" ? "*/*" : "application/json",
  };
  const bodyOf = (known: readonly string[], given: Record<string, unknown>) =>
    style === "node" ? given : { ...Object.fromEntries(known.map((key) => [key, null])), ...given };
  const listingQuery =
    style === "python"
      ? "?expand=None&filter=None&limit=None&end_before=None&start_after=None"
      : style === "php"
        ? "?filter=&limit=&end_before=&start_after="
        : "";
  /** Python and PHP always append `?` and the encoded options; Node and Ruby only when there are some. */
  const withQuery = (path: string, options: QueryOptions | undefined) => {
    if (style === "python" || style === "php") return `${path}?${queryString(style, options ?? {})}`;
    return options ? `${path}?${queryString(style, options)}` : path;
  };
  const send = async (method: string, target: string, body?: Record<string, unknown> | "") => {
    const answer = await sendRaw(baseUrl, {
      method,
      target,
      // PHP's curl requests carry the JSON content type even without a body (GET, DELETE).
      headers:
        body === undefined && style !== "php" ? headers : { ...headers, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: body === "" ? "" : JSON.stringify(body) }),
    });
    return { status: answer.status, body: (answer.text ? JSON.parse(answer.text) : undefined) as Json };
  };
  return {
    style,
    get: (path: string, options?: QueryOptions) => send("GET", withQuery(path, options)),
    list: (path: string) => send("GET", `${path}${listingQuery}`),
    post: (path: string, known: readonly string[], given: Record<string, unknown>) =>
      send("POST", path, bodyOf(known, given)),
    put: (path: string, known: readonly string[], given: Record<string, unknown>) =>
      send("PUT", path, bodyOf(known, given)),
    del: (path: string, options?: QueryOptions) =>
      send("DELETE", withQuery(path, options), style === "php" ? {} : undefined),
    postEmpty: (path: string) => send("POST", path, style === "node" ? undefined : ""),
  };
}

export type ClientLibrary = ReturnType<typeof clientLibrary>;

/** The answer succeeded, with the key the clients read. */
export function read(answer: { status: number; body: Json }, key?: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.success).toBe(true);
  if (key) expect(answer.body).toHaveProperty(key);
  return key ? answer.body[key] : answer.body;
}
