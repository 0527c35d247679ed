import middy, { type MiddlewareObj } from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { type AuditEntry, auditOutcome } from "../dashboard/audit.ts";
import {
  auditStart,
  authenticateSession,
  checkFields,
  hasSessionCookie,
  isAuditedChange,
  type SessionCaller,
} from "../dashboard/session-auth.ts";
import { IdempotencyKeyTaken, type TransactItem } from "../db/transactions.ts";
import { logger } from "../observability/logger.ts";
import { flushMetrics, recordRequest } from "../observability/metrics.ts";
import { keyUsesRecorded } from "../projects/key-use.ts";
import type { PublicKeyAccess } from "./access.ts";
import { type AuthenticatedCaller, authenticate } from "./auth.ts";
import { ApiError, BusyError, notFound } from "./errors.ts";
import {
  acquire,
  answerForTakenKey,
  claimInTheWrite,
  claimWithAnswer,
  complete,
  fingerprint,
  type IdempotencyHandle,
  type IdempotencyMode,
  readIdempotencyKey,
  release,
  type StoredResponse,
} from "./idempotency.ts";
import { type Input, parseBody, parseQuery, rawBody } from "./input.ts";
import { malformedPathParameter } from "./path-parameters.ts";
import {
  type Answer,
  errorBody,
  errorResult,
  isHandlerTimeout,
  JSON_HEADERS,
  type Reply,
  storedReplyJson,
  toResult,
} from "./reply.ts";

/** Everything a handler needs about its request, already parsed and authenticated. */
export interface ApiRequest {
  requestId: string;
  method: string;
  /** The path as requested, and the route's decoded path parameters. */
  rawPath: string;
  path: Record<string, string>;
  query: Input;
  body: Input;
  /** The request's headers, names in lower case. */
  headers: Record<string, string | undefined>;
  caller: AuthenticatedCaller;
  /** The request's `Idempotency-Key` (POST, PUT, DELETE), so that its retry can be recognised as such. */
  idempotencyKey?: string;
  /**
   * Writes to add to the transaction of the state change this request makes, so that the
   * answer stored for its `Idempotency-Key` commits with the change (empty without a key).
   */
  commitWith(reply: Reply): TransactItem[];
  /** The body exactly as sent, for what is signed over its bytes (a provider's webhook). */
  rawBody(): string;
  /** What is left of the function's time (its timeout) for this request. */
  remainingTimeMs(): number;
  /**
   * Aborted when the function is about to time out, once the request is answered 504: long work
   * checks it and stops.
   */
  signal: AbortSignal;
}

type PublicRequest = Omit<ApiRequest, "caller">;

/**
 * What identifies a POST for its `Idempotency-Key` (default: its query and body). Only a hash of it
 * is stored, an unkeyed one: a route whose body carries secrets (card numbers) replaces them here.
 */
export type IdempotencyParameters = (request: ApiRequest) => Promise<unknown>;

/** A JSON answer's payload (what goes beside `success`). */
export type AnswerBody = Record<string, unknown>;

/**
 * How a route expands the resources it answers (`shared/expansion`). `prepare` reads and checks the
 * request's `expand` before any work (an unknown path is a 400 naming `expand`) and gives what
 * expands an answer, or nothing when nothing is asked. It applies to every success the route
 * answers, an `Idempotency-Key` replay included: stored answers keep their links as ids, and links
 * are expanded as they are when answered.
 */
export interface AnswerExpansion {
  prepare(request: ApiRequest): ((body: AnswerBody) => Promise<AnswerBody>) | undefined;
}

interface ApiOptions {
  /** `none` for the routes that need no project (the 404 fallback, pages); else the caller's keys. */
  auth?: "none";
  /**
   * Set on the routes the public key (the project id alone) may call, with what it may send and
   * see there (`access.ts`); every other route needs the private key.
   */
  publicKey?: PublicKeyAccess;
  idempotencyParameters?: IdempotencyParameters;
  /** How the route takes its `Idempotency-Key` (`IdempotencyMode`); default `lock`. */
  idempotency?: IdempotencyMode;
  expand?: AnswerExpansion;
  notFound?: NotFoundAnswer;
}

/**
 * What a route answering HTML (the 3DS page) answers for a malformed path parameter: its own 404
 * page. JSON routes answer `resource.<name>.not-found`.
 */
export type NotFoundAnswer = () => Answer;

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

interface State {
  requestId: string;
  startedAt: number;
  caller?: AuthenticatedCaller;
  request?: PublicRequest & { caller?: AuthenticatedCaller };
  idempotency?: IdempotencyHandle;
  expandAnswer?: (body: AnswerBody) => Promise<AnswerBody>;
  /** The audit log's entry of a change a dashboard session makes, written before the handler. */
  audited?: AuditEntry;
}
type ApiContext = Context & { api: State };

/**
 * Wraps a handler in the HTTP core every endpoint shares, in this order: request logging and error
 * answers; authentication (from the Authorization header alone); path parameters checked for shape;
 * body and query parsing (JSON or form, within `INPUT_LIMITS`); `Idempotency-Key`. Nothing the
 * caller sent is parsed before the caller is known, so an unauthenticated request costs no parsing.
 */
export function api(
  handle: (request: ApiRequest) => Promise<Reply>,
  options?: {
    publicKey?: PublicKeyAccess;
    idempotencyParameters?: IdempotencyParameters;
    idempotency?: IdempotencyMode;
    expand?: AnswerExpansion;
  },
): Handler;
/** Routes without credentials (the 404 fallback, the 3DS challenge page) may also answer HTML. */
export function api(
  handle: (request: PublicRequest) => Promise<Answer>,
  options: { auth: "none"; notFound?: NotFoundAnswer },
): Handler;
export function api(handle: (request: ApiRequest) => Promise<Answer>, options: ApiOptions = {}): Handler {
  const authMode = options.auth ?? (options.publicKey ? "public-key" : "private-key");
  const shown = answerShown(options.publicKey);
  const handler = middy<Event, Result, Error, ApiContext>()
    .use(errorAnswers())
    .use(authentication(authMode))
    .use(pathParameters(options.notFound))
    .use(parsing(options.publicKey, shown, options.expand))
    .use(audited())
    .use(idempotency(options.idempotency ?? "lock", options.idempotencyParameters))
    .handler(async (_event, context, { signal }) => {
      const state = context.api;
      const request = state.request as ApiRequest;
      request.signal = signal;
      const reply = await handle(request);
      const answer = shown(reply, state.caller);
      if (!state.expandAnswer || !("body" in answer)) return toResult(answer, state.requestId);
      return toResult({ ...answer, body: await state.expandAnswer(answer.body) }, state.requestId);
    }) as unknown as Handler;
  return measured(handler);
}

/**
 * The request's metrics (`shared/observability/metrics.ts`), printed once it is answered: around the
 * whole chain, so that every answer counts, those a middleware gives early (an `Idempotency-Key`
 * replay, a malformed path parameter) and the error answers included. A throw that escaped every
 * middleware counts as the 500 Lambda's caller sees.
 */
function measured(handler: Handler): Handler {
  return async (event, context) => {
    const started = performance.now();
    let status = 500;
    try {
      const result = await handler(event, context);
      status = result?.statusCode ?? 200;
      // Started at authentication beside the handler's work: done by now, mostly.
      await keyUsesRecorded();
      return result;
    } finally {
      recordRequest(event.routeKey || "$default", status, performance.now() - started);
      flushMetrics();
    }
  };
}

/** What a caller is answered: the whole answer, or for the public key the part its access shows. */
type AnswerShown = (reply: Answer, caller: AuthenticatedCaller | undefined) => Answer;

function answerShown(access: PublicKeyAccess | undefined): AnswerShown {
  return (reply, caller) =>
    access && caller?.credential === "public-key" && "body" in reply
      ? { ...reply, body: access.answer(reply.body) }
      : reply;
}

const NOT_ABORTED = new AbortController().signal;

/** A Lambda handler for API Gateway HTTP API (payload 2.0) events. */
export type Handler = (event: Event, context: Context) => Promise<Result>;

/** Outermost: logs each request once and turns every error into a JSON answer, never a crash. */
function errorAnswers(): MiddlewareObj<Event, Result, Error, ApiContext> {
  return {
    before: ({ event, context }) => {
      const requestId = event.requestContext?.requestId ?? context.awsRequestId;
      context.api = { requestId, startedAt: Date.now() };
      logger.resetKeys();
      logger.appendKeys({ request_id: requestId, lambda_request_id: context.awsRequestId });
    },
    after: ({ event, context, response }) => {
      logRequest(event, context, response?.statusCode ?? 200);
    },
    onError: (request) => {
      const { error, event, context } = request;
      const state = context.api ?? { requestId: context.awsRequestId, startedAt: Date.now() };
      if (isHandlerTimeout(error)) {
        logger.error("The handler did not answer within the function's time limit", { error });
      } else if (!(error instanceof ApiError)) {
        logger.error("Unexpected error", { error });
      }
      request.response = errorResult(error, state.requestId);
      logRequest(event, context, request.response.statusCode ?? 500);
    },
  };
}

function logRequest(event: Event, context: ApiContext, status: number) {
  logger.info("request", {
    method: event.requestContext?.http?.method,
    route: event.routeKey,
    status,
    duration_ms: context.api ? Date.now() - context.api.startedAt : undefined,
  });
}

/** Every path parameter has its declared shape (`path-parameters.ts`) before anything reads it. */
function pathParameters(answer?: NotFoundAnswer): MiddlewareObj<Event, Result, Error, ApiContext> {
  return {
    before: ({ event, context }) => {
      const malformed = malformedPathParameter(event.pathParameters ?? {});
      if (!malformed) return;
      if (answer) return toResult(answer(), context.api.requestId);
      throw notFound(malformed.resource);
    },
  };
}

/**
 * Parses the query and body; a public-key request keeps only what its access lets it send. The
 * answer stored for an `Idempotency-Key` is the one the caller is shown, so a replay shows no more.
 * Reads the request's `expand` (`expand.prepare`) before any work.
 */
function parsing(
  access: PublicKeyAccess | undefined,
  shown: AnswerShown,
  expand?: AnswerExpansion,
): MiddlewareObj<Event, Result, Error, ApiContext> {
  return {
    before: ({ event, context }) => {
      const state = context.api;
      const parsed = { query: parseQuery(event.rawQueryString), body: parseBody(event) };
      const { query, body } =
        access && state.caller?.credential === "public-key" ? access.request(parsed) : parsed;
      state.request = {
        ...(state.caller ? { caller: state.caller } : {}),
        requestId: state.requestId,
        method: event.requestContext.http.method,
        rawPath: event.rawPath,
        path: (event.pathParameters ?? {}) as Record<string, string>,
        query,
        body,
        headers: event.headers ?? {},
        rawBody: () => rawBody(event),
        remainingTimeMs: () =>
          typeof context.getRemainingTimeInMillis === "function"
            ? context.getRemainingTimeInMillis()
            : Number.POSITIVE_INFINITY,
        // The handler's own (aborted at the function's early timeout) replaces it when it runs.
        signal: NOT_ABORTED,
        commitWith: (reply) => {
          const handle = state.idempotency;
          if (!handle) return [];
          handle.committed = true;
          return [handle.completion(stored(shown(reply, state.caller) as Reply))];
        },
      };
      if (expand) state.expandAnswer = expand.prepare(state.request as ApiRequest);
    },
  };
}

function authentication(
  mode: "private-key" | "public-key" | "none",
): MiddlewareObj<Event, Result, Error, ApiContext> {
  return {
    before: async ({ event, context }) => {
      if (mode === "none") return;
      // The dashboard calls the API with its session cookie and no Authorization header; a key, when
      // sent, is what authenticates (the cookie is then ignored), exactly as before the dashboard.
      const authorization = event.headers?.authorization;
      const caller =
        authorization === undefined && hasSessionCookie(event)
          ? await authenticateSession(event)
          : await authenticate(authorization, mode);
      if (caller.credential === "supervisor-key" && event.requestContext?.http?.method !== "GET") {
        throw new ApiError(
          403,
          "request.authentication.supervisor-read-only",
          "A supervisor's key reads a supervised project's data, and changes nothing: use the project's own key.",
        );
      }
      caller.origin = {
        requestId: context.api.requestId,
        sourceIp: event.requestContext?.http?.sourceIp ?? null,
        userAgent: event.headers?.["user-agent"] ?? null,
      };
      context.api.caller = caller;
      logger.appendKeys({ project_id: caller.projectId });
    },
  };
}

/**
 * A change made through the dashboard is in the audit log before it runs, and its outcome after:
 * if the entry cannot be written, the change is not made.
 */
function audited(): MiddlewareObj<Event, Result, Error, ApiContext> {
  return {
    before: async ({ event, context }) => {
      const caller = context.api.caller;
      if (caller?.credential !== "dashboard") return;
      // A field the person's role may not send to this route is refused before anything is written.
      checkFields(caller as SessionCaller, event, context.api.request?.body);
      if (!isAuditedChange(event)) return;
      context.api.audited = await auditStart(caller as SessionCaller, event);
    },
    after: async ({ context, response }) => {
      const entry = context.api.audited;
      if (entry) await auditOutcome(entry, response?.statusCode ?? 200, new Date());
    },
    onError: async ({ context, error, response }) => {
      const entry = context.api?.audited;
      if (!entry) return;
      const status = response?.statusCode ?? errorBody(error, context.api.requestId).status;
      await auditOutcome(entry, status, new Date()).catch((failure: unknown) =>
        logger.error("The audit log's outcome could not be written", { error: failure }),
      );
    },
  };
}

/**
 * The methods an `Idempotency-Key` applies to: every change. The mobile libraries send a fresh key on
 * each POST, PUT and DELETE and reuse it on retry (a 3DS round of a token's verification is a PUT).
 */
const KEYED_METHODS = new Set(["POST", "PUT", "DELETE"]);

function idempotency(
  mode: IdempotencyMode,
  parameters?: IdempotencyParameters,
): MiddlewareObj<Event, Result, Error, ApiContext> {
  return {
    before: async ({ event, context }) => {
      const state = context.api;
      const request = state.request as ApiRequest;
      if (!KEYED_METHODS.has(request.method) || !request.caller) return;
      const key = readIdempotencyKey(event.headers ?? {});
      if (!key) return;
      const identifying = parameters
        ? await parameters(request)
        : { query: request.query, body: request.body };
      const print = fingerprint(request.method, event.rawPath, identifying);
      request.idempotencyKey = key;
      if (mode === "in-the-write") {
        state.idempotency = claimInTheWrite(
          request.caller.projectId,
          request.caller.credential,
          key,
          print,
          state.requestId,
        );
        return;
      }
      const acquired = await acquire(
        request.caller.projectId,
        request.caller.credential,
        key,
        print,
        state.requestId,
      );
      if ("replay" in acquired) return replayed(acquired.replay, state);
      state.idempotency = acquired.handle;
    },
    after: async ({ context, response }) => {
      const handle = context.api.idempotency;
      if (!handle || handle.committed || !response) return;
      await complete(handle, { statusCode: response.statusCode ?? 200, body: response.body ?? "" });
    },
    onError: async (request) => {
      const { context, error } = request;
      const handle = context.api?.idempotency;
      if (!handle) return;
      const { status, body } = errorBody(error, context.api.requestId);
      // A refusal is an answer worth replaying; a fault, or work still under way elsewhere (a busy
      // 409), is not: the retry runs again.
      const replayable = status < 500 && !(error instanceof BusyError);
      let taken: ReturnType<typeof answerForTakenKey> | undefined;
      if (handle.mode === "in-the-write" && error instanceof IdempotencyKeyTaken) {
        // A duplicate's transaction claimed the key first: its answer is this request's too.
        taken = answerForTakenKey(handle, error.existing);
      } else if (handle.mode === "in-the-write" && replayable) {
        // Stored, unless the key holds a first answer already.
        taken = await claimWithAnswer(handle, { statusCode: status, body: JSON.stringify(body) });
      } else if (replayable) {
        await complete(handle, { statusCode: status, body: JSON.stringify(body) });
      } else if (handle.mode === "lock") {
        await release(handle);
      }
      if (!taken) return;
      if (!("replay" in taken)) {
        request.error = taken;
        return;
      }
      const result = await replayed(taken.replay, context.api);
      logRequest(request.event, context, result.statusCode ?? 200);
      return result;
    },
  };
}

/** The answer stored for an `Idempotency-Key`, sent again (expanded as this request asks). */
async function replayed(answer: StoredResponse, state: State): Promise<Result> {
  const { statusCode, body } = answer;
  const expandAnswer = statusCode < 400 ? state.expandAnswer : undefined;
  return {
    statusCode,
    headers: { ...JSON_HEADERS, "x-request-id": state.requestId, "idempotent-replayed": "true" },
    body: expandAnswer ? JSON.stringify(await expandAnswer(JSON.parse(body))) : body,
  };
}

function stored(reply: Reply) {
  return { statusCode: reply.status, body: storedReplyJson(reply) };
}
