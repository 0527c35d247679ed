import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { Duplex } from "node:stream";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import {
  measuringRoundTrips,
  noRoundTrips,
  type RoundTrips,
  stopMeasuringRoundTrips,
} from "../../shared/db/round-trips.ts";
import { INPUT_LIMITS } from "../../shared/http/input.ts";
import { cors, fallbackRoute, type RouteDeclaration, routes } from "../topology.ts";
import { HandlerTimeout, handlerLoader, invoke, LOCAL_ACCOUNT_ID, lambdaContext } from "./lambda.ts";
import { repoRoot } from "./paths.ts";

/**
 * The local stand-in for API Gateway (HTTP API, payload format 2.0) in front of Lambda: each
 * request becomes the event API Gateway would send, the route's handler module is loaded from
 * `functions/` and its `handler` is called exactly as Lambda calls it, and the result is turned
 * back into an HTTP answer by API Gateway's rules. Routes come from `lib/topology.ts`, like the
 * CDK stack's.
 */

/**
 * Request bodies above this get a 413: API Gateway allows 10 MB, but the API's handlers refuse
 * bodies past their own limit, so reading more would only end in the same answer.
 */
export const MAX_REQUEST_BODY_BYTES = INPUT_LIMITS.bodyBytes;
/**
 * A request line and headers above this get a 431 (Node's own default, stated here: a query string
 * counts, and API Gateway has limits of the same order).
 */
export const MAX_REQUEST_HEADER_BYTES = 16 * 1024;
/** A handler that has not answered by then gets a 504 (API Gateway's integration limit is 30 s). */
export const HANDLER_TIMEOUT_MS = 29_000;
const LOCAL_API_ID = "local";

export interface LocalApiOptions {
  /** Default: the routes of `lib/topology.ts`. */
  routes?: readonly RouteDeclaration[];
  /** Handler of every request no route matches (API Gateway's `$default` route). */
  fallbackHandler?: string;
  /** Where `functions/` lives. Default: the repository root. */
  rootDir?: string;
  /** Requests wait for this before reaching a handler (the stack is still starting). */
  ready?: Promise<unknown>;
  /** One line per request; default: none. */
  accessLog?: (line: string) => void;
  /** Handler failures (API Gateway would log them to CloudWatch). Default: `console.error`. */
  errorLog?: (message: string, error?: unknown) => void;
  /** The DynamoDB round trips each request made on its own path (the benchmark's figures). */
  roundTrips?: (routeKey: string, trips: RoundTrips) => void;
  /** With `roundTrips`: requests are metered only while this answers true (default: always). */
  meteringRoundTrips?: () => boolean;
  /**
   * Plain-text pages of the local stack itself, by path, answered to a GET before any route (the
   * collected metrics, `metrics.ts`): no route of the deployment.
   */
  localPages?: Readonly<Record<string, () => string>>;
}

interface Segment {
  literal?: string;
  parameter?: string;
}

interface CompiledRoute {
  routeKey: string;
  handler: string;
  segments: Segment[];
}

interface Match {
  routeKey: string;
  handler: string;
  pathParameters?: Record<string, string>;
}

export function createLocalApi(options: LocalApiOptions = {}): Server {
  const router = compileRoutes(options.routes ?? routes, options.fallbackHandler ?? fallbackRoute.handler);
  const loadHandler = handlerLoader(options.rootDir ?? repoRoot);
  const errorLog = options.errorLog ?? ((message, error) => console.error(message, error ?? ""));

  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEADER_BYTES }, (request, response) => {
    const started = Date.now();
    allowCrossOrigin(request, response);
    serve(request, response)
      .catch((error: unknown) => {
        errorLog(`Local API: ${request.method} ${request.url} failed`, error);
        if (!response.headersSent) sendError(response, 500, "internal", "The local API failed to answer.");
        else response.destroy();
      })
      .finally(() => {
        const status = response.headersSent ? response.statusCode : "no answer";
        options.accessLog?.(`${request.method} ${request.url} → ${status} (${Date.now() - started} ms)`);
      });
  });

  async function serve(request: IncomingMessage, response: ServerResponse) {
    const body = await readBody(request);
    if (body === "cut-short") return;
    if (body === "too-large") {
      sendError(
        response,
        413,
        "request.body.too-large",
        `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes.`,
      );
      return;
    }
    if (isPreflight(request)) {
      answerPreflight(response);
      return;
    }
    await options.ready;

    const { rawPath, rawQueryString } = splitTarget(request.url ?? "/");
    const pages = options.localPages;
    const localPage =
      request.method === "GET" && pages && Object.hasOwn(pages, rawPath) ? pages[rawPath] : undefined;
    if (localPage) {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(localPage());
      return;
    }
    const match = router(request.method ?? "GET", rawPath);
    const requestId = apiGatewayRequestId();
    const event = toEvent(request, { rawPath, rawQueryString, body, match, requestId });

    let result: unknown;
    try {
      const handle = await loadHandler(match.handler);
      const run = () =>
        invoke(handle, event, lambdaContext(match.handler, HANDLER_TIMEOUT_MS), HANDLER_TIMEOUT_MS);
      // Counting a request's round trips follows its promises (an AsyncLocalStorage, whose hooks
      // every promise of the process then pays): only when someone reads the count.
      const record = options.roundTrips;
      if (record && (options.meteringRoundTrips?.() ?? true)) {
        const trips = noRoundTrips();
        result = await measuringRoundTrips(trips, run);
        record(match.routeKey, trips);
      } else {
        if (record) stopMeasuringRoundTrips();
        result = await run();
      }
    } catch (error) {
      errorLog(`Handler ${match.handler} failed on ${match.routeKey} (request ${requestId})`, error);
      const timedOut = error instanceof HandlerTimeout;
      sendError(
        response,
        timedOut ? 504 : 500,
        "internal",
        timedOut
          ? `The handler did not answer within ${HANDLER_TIMEOUT_MS / 1000} s. Request id ${requestId}.`
          : `An internal error occurred. Quote request id ${requestId} to support.`,
        requestId,
      );
      return;
    }

    const answer = toAnswer(result);
    if ("invalid" in answer) {
      errorLog(`Handler ${match.handler} returned an invalid result: ${answer.invalid}`);
      sendError(
        response,
        500,
        "internal",
        `An internal error occurred. Quote request id ${requestId} to support.`,
        requestId,
      );
      return;
    }
    send(response, answer, requestId);
  }

  // What Node refuses before any handler (a malformed request, headers too large, an expectation or
  // a method it cannot serve) it would answer with an empty body, which client libraries cannot read.
  server.on("clientError", refuseMalformedRequest);
  server.on("checkExpectation", (_request, response: ServerResponse) =>
    sendError(response, 417, "request.expectation.unsupported", "Only Expect: 100-continue is supported."),
  );
  server.on("connect", (_request, socket: Duplex) =>
    writeRawError(
      socket,
      405,
      "request.method.not-allowed",
      "CONNECT is not supported: this is not a proxy.",
    ),
  );
  return server;
}

/** Listens on `port` (0: any free port) on all interfaces and resolves with the port in use. */
export function listen(server: Server, port: number): Promise<number> {
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(port, () => {
      server.off("error", fail);
      const address = server.address();
      done(typeof address === "object" && address ? address.port : port);
    });
  });
}

/** Requests still running when the server closes get this long to finish before their connection is cut. */
const CLOSE_GRACE_MS = 2_000;

/** Stops accepting connections, ends idle keep-alive connections, and waits for the rest (briefly). */
export function close(server: Server): Promise<void> {
  return new Promise((done) => {
    if (!server.listening) return done();
    const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    server.close(() => {
      clearTimeout(cut);
      done();
    });
    server.closeIdleConnections();
  });
}

// ---- routing ----------------------------------------------------------------------------------

function compileRoutes(declared: readonly RouteDeclaration[], fallbackHandler: string) {
  const table = new Map<string, CompiledRoute[]>();
  for (const route of declared) {
    const segments = route.path
      .split("/")
      .slice(1)
      .map((part): Segment => {
        const parameter = /^\{([A-Za-z0-9_]+)\}$/.exec(part)?.[1];
        if (parameter) return { parameter };
        if (part.includes("{")) {
          throw new Error(
            `Route ${route.method} ${route.path}: only whole-segment {name} parameters are supported.`,
          );
        }
        return { literal: part };
      });
    const list = table.get(route.method) ?? [];
    list.push({ routeKey: `${route.method} ${route.path}`, handler: route.handler, segments });
    table.set(route.method, list);
  }

  /** API Gateway's choice: literal segments beat parameters; a parameter is one non-empty segment. */
  return (method: string, rawPath: string): Match => {
    const parts = rawPath.split("/").slice(1);
    let best: { route: CompiledRoute; parameters: Record<string, string>; rank: string } | undefined;
    for (const route of table.get(method) ?? []) {
      if (route.segments.length !== parts.length) continue;
      const parameters: Record<string, string> = {};
      let rank = "";
      const matches = route.segments.every((segment, i) => {
        const decoded = safeDecode(parts[i] ?? "");
        if (decoded === undefined) return false;
        if (segment.parameter) {
          parameters[segment.parameter] = decoded;
          rank += "0";
          return decoded !== "";
        }
        rank += "1";
        return decoded === segment.literal;
      });
      if (matches && (!best || rank > best.rank)) best = { route, parameters, rank };
    }
    if (!best) return { routeKey: "$default", handler: fallbackHandler };
    const hasParameters = Object.keys(best.parameters).length > 0;
    return {
      routeKey: best.route.routeKey,
      handler: best.route.handler,
      ...(hasParameters ? { pathParameters: best.parameters } : {}),
    };
  };
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function splitTarget(target: string): { rawPath: string; rawQueryString: string } {
  // An absolute-form target (`GET http://host/path`, sent to proxies) carries its path after the host.
  const relative = target.startsWith("/") ? target : new URL(target, "http://localhost").pathname;
  const question = relative.indexOf("?");
  if (question < 0) return { rawPath: relative, rawQueryString: "" };
  return { rawPath: relative.slice(0, question), rawQueryString: relative.slice(question + 1) };
}

// ---- request → event --------------------------------------------------------------------------

async function readBody(request: IncomingMessage): Promise<Buffer | "too-large" | "cut-short"> {
  const declared = Number(request.headers["content-length"]);
  let tooLarge = declared > MAX_REQUEST_BODY_BYTES;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Past the limit the rest is read and dropped, so the client still gets to read the 413.
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    }
  } catch (error) {
    // The client left, or Node refused the body's framing and answered (`refuseMalformedRequest`).
    if (!request.complete) return "cut-short";
    throw error;
  }
  return tooLarge ? "too-large" : Buffer.concat(chunks);
}

/** Bodies API Gateway passes as text; every other content type arrives base64-encoded. */
function isTextContentType(contentType: string | undefined): boolean {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type.startsWith("text/") || type === "application/json" || type.endsWith("+json");
}

function toEvent(
  request: IncomingMessage,
  parts: { rawPath: string; rawQueryString: string; body: Buffer; match: Match; requestId: string },
): APIGatewayProxyEventV2 {
  const { rawPath, rawQueryString, body, match, requestId } = parts;
  const headerValues = new Map<string, string>();
  const cookies: string[] = [];
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    // Payload 2.0 moves cookies out of the headers into `cookies`, one entry per cookie.
    if (name === "cookie") {
      cookies.push(
        ...value
          .split(";")
          .map((cookie) => cookie.trim())
          .filter(Boolean),
      );
      continue;
    }
    const previous = headerValues.get(name);
    headerValues.set(name, previous === undefined ? value : `${previous},${value}`);
  }
  // fromEntries defines own properties, so no name (not even `__proto__`) is lost.
  const headers: Record<string, string> = Object.fromEntries(headerValues);

  const now = new Date();
  const host = (headers.host ?? "localhost").replace(/:\d+$/, "");
  const text = isTextContentType(headers["content-type"]);
  const event: APIGatewayProxyEventV2 = {
    version: "2.0",
    routeKey: match.routeKey,
    rawPath,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(rawQueryString ? { queryStringParameters: queryParameters(rawQueryString) } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: LOCAL_API_ID,
      domainName: host,
      domainPrefix: host.split(".")[0] ?? host,
      http: {
        method: request.method ?? "GET",
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: (request.socket.remoteAddress ?? "127.0.0.1").replace(/^::ffff:/, ""),
        userAgent: headers["user-agent"] ?? "",
      },
      requestId,
      routeKey: match.routeKey,
      stage: "$default",
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(match.pathParameters ? { pathParameters: match.pathParameters } : {}),
    ...(body.length > 0
      ? { body: text ? body.toString("utf8") : body.toString("base64"), isBase64Encoded: !text }
      : { isBase64Encoded: false }),
  };
  return event;
}

/** Decoded query parameters; a repeated name's values are joined with commas, as API Gateway does. */
function queryParameters(rawQueryString: string): Record<string, string> {
  const parameters = new Map<string, string>();
  for (const pair of rawQueryString.split("&")) {
    if (!pair) continue;
    const equals = pair.indexOf("=");
    const name = safeDecode(equals < 0 ? pair : pair.slice(0, equals)) ?? pair;
    const value = equals < 0 ? "" : (safeDecode(pair.slice(equals + 1)) ?? pair.slice(equals + 1));
    const previous = parameters.get(name);
    parameters.set(name, previous === undefined ? value : `${previous},${value}`);
  }
  return Object.fromEntries(parameters);
}

/**
 * API Gateway's request ids look like `JKJaXmPLvHcESHA=` (11 random bytes). Taken from a random
 * UUID, which Node draws from a buffer it fills ahead (`randomBytes` drew from the kernel on every
 * request: some 60 µs each under load).
 */
function apiGatewayRequestId(): string {
  return Buffer.from(randomUUID().replaceAll("-", "").slice(0, 22), "hex").toString("base64");
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** `12/Mar/2020:19:03:58 +0000`, the format of `requestContext.time`. */
function clfTime(date: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return (
    `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`
  );
}

// ---- result → answer --------------------------------------------------------------------------

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
  body: Buffer;
}

/**
 * API Gateway's reading of a payload 2.0 result: a `statusCode` makes it a structured answer;
 * any other JSON value is a 200 whose body is that value. What API Gateway could not read is invalid.
 */
function toAnswer(result: unknown): Answer | { invalid: string } {
  if (result === undefined || result === null) return { invalid: `the handler returned ${result}` };
  if (typeof result !== "object" || !("statusCode" in result)) {
    const body = typeof result === "string" ? result : JSON.stringify(result);
    if (body === undefined) return { invalid: `a ${typeof result} is not a result` };
    return {
      statusCode: 200,
      headers: { "content-type": "application/json" },
      cookies: [],
      body: Buffer.from(body),
    };
  }
  const structured = result as APIGatewayProxyStructuredResultV2;
  const { statusCode, headers = {}, cookies = [], body, isBase64Encoded = false } = structured;
  if (!Number.isInteger(statusCode) || (statusCode as number) < 100 || (statusCode as number) > 599) {
    return { invalid: `statusCode ${JSON.stringify(statusCode)} is not an HTTP status` };
  }
  if (body !== undefined && typeof body !== "string") return { invalid: "body is not a string" };
  if (typeof headers !== "object" || headers === null) return { invalid: "headers is not an object" };
  const flatHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!["string", "number", "boolean"].includes(typeof value)) {
      return { invalid: `header ${name} is not a string, number or boolean` };
    }
    flatHeaders[name.toLowerCase()] = String(value);
  }
  if (!Array.isArray(cookies) || cookies.some((cookie) => typeof cookie !== "string")) {
    return { invalid: "cookies is not an array of strings" };
  }
  return {
    statusCode: statusCode as number,
    headers: flatHeaders,
    cookies,
    body: Buffer.from(body ?? "", isBase64Encoded ? "base64" : "utf8"),
  };
}

function send(response: ServerResponse, answer: Answer, requestId: string) {
  response.statusCode = answer.statusCode;
  for (const [name, value] of Object.entries(answer.headers)) {
    // API Gateway ignores the CORS headers of an integration's answer when the API has a CORS configuration.
    if (!name.startsWith("access-control-")) response.setHeader(name, value);
  }
  if (answer.cookies.length > 0) response.setHeader("set-cookie", answer.cookies);
  response.setHeader("apigw-requestid", requestId);
  response.setHeader("content-length", answer.body.length);
  response.end(answer.body);
}

function errorJson(errorType: string, message: string, requestId?: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      success: false,
      error_type: errorType,
      message,
      ...(requestId ? { request_id: requestId } : {}),
    }),
  );
}

function sendError(
  response: ServerResponse,
  status: number,
  errorType: string,
  message: string,
  requestId?: string,
) {
  const body = errorJson(errorType, message, requestId);
  response.statusCode = status;
  response.setHeader("content-type", "application/json; charset=utf-8");
  response.setHeader("content-length", body.length);
  if (requestId) response.setHeader("apigw-requestid", requestId);
  response.end(body);
}

// ---- cross-origin requests (CORS) ------------------------------------------------------------

/**
 * API Gateway's CORS, from the same declaration as the deployed API's (`cors` in `lib/topology.ts`):
 * a request from a page (it has an `Origin`) gets the allowed origin and the exposed headers on
 * whatever it is answered, and a preflight (`OPTIONS` with `Origin` and
 * `Access-Control-Request-Method`) is answered here, for any path, without reaching a handler.
 */
function allowCrossOrigin(request: IncomingMessage, response: ServerResponse) {
  if (request.headers.origin === undefined) return;
  response.setHeader("access-control-allow-origin", cors.allowOrigins.join(","));
  response.setHeader("access-control-expose-headers", cors.exposeHeaders.join(","));
}

function isPreflight(request: IncomingMessage): boolean {
  return (
    request.method === "OPTIONS" &&
    request.headers.origin !== undefined &&
    request.headers["access-control-request-method"] !== undefined
  );
}

function answerPreflight(response: ServerResponse) {
  response.statusCode = 204;
  response.setHeader("access-control-allow-methods", cors.allowMethods.join(","));
  response.setHeader("access-control-allow-headers", cors.allowHeaders.join(","));
  response.setHeader("access-control-max-age", String(cors.maxAgeSeconds));
  response.end();
}

// ---- what Node refuses before a handler -------------------------------------------------------

/** Node's HTTP parser errors and the answer each gets (Node's own statuses), in the API's error shape. */
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [
    431,
    "request.headers.too-large",
    `The request line and headers, the query string included, are larger than ${MAX_REQUEST_HEADER_BYTES} bytes.`,
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [
    413,
    "request.body.too-large",
    "The request's chunk extensions are too large.",
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "request.timeout", "The request was not received in time."],
};
const MALFORMED_REQUEST = [400, "request.malformed", "The request is not valid HTTP/1.1."] as const;

function refuseMalformedRequest(error: NodeJS.ErrnoException, socket: Duplex) {
  // Nobody is left to answer on a reset connection; nor may an answer be written into one already
  // under way (Node's own handler checks the same).
  if (error.code === "ECONNRESET" || !socket.writable || answerUnderWay(socket)) {
    socket.destroy();
    return;
  }
  const [status, errorType, message] = CLIENT_ERRORS[error.code ?? ""] ?? MALFORMED_REQUEST;
  writeRawError(socket, status, errorType, message);
}

function answerUnderWay(socket: Duplex): boolean {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
}

/** An answer written on the connection itself, where Node gives no response object; then it closes. */
function writeRawError(socket: Duplex, status: number, errorType: string, message: string) {
  const body = errorJson(errorType, message);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${body.length}`,
    "connection: close",
  ];
  socket.end(Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`), body]));
}
