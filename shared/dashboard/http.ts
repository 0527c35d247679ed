import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { clock } from "../clock.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { type Input, parseBody, parseQuery } from "../http/input.ts";
import { malformedPathParameter } from "../http/path-parameters.ts";
import { errorBody, errorResult, toResult } from "../http/reply.ts";
import { logger } from "../observability/logger.ts";
import { flushMetrics, recordRequest } from "../observability/metrics.ts";
import { type AuditEntry, audit, auditOutcome, requestFacts, subjectOf } from "./audit.ts";
import { TooManyAttempts } from "./lockout.ts";
import { actionOf, mayCall } from "./roles.ts";
import { forbidden, originRefused, secondFactorRequired } from "./session-auth.ts";
import {
  csrfMatches,
  csrfRefused,
  type LoadedSession,
  loadSession,
  originAllowed,
  signedOut,
  touchSession,
} from "./sessions.ts";

/** What a dashboard route's handler gets: the request parsed, and the session when it needs one. */
export interface DashboardRequest {
  event: APIGatewayProxyEventV2;
  requestId: string;
  now: Date;
  body: Input;
  query: Input;
  path: Record<string, string>;
  /** Set on every route but the public ones (`roles.ts`); those may read it with `optionalSession`. */
  session: LoadedSession;
  /** The session a public route's request carries, if any (`POST /dashboard/sign-in/totp`). */
  optionalSession: LoadedSession | undefined;
  /** This API's own address, as the browser reached it (links are built on it). */
  baseUrl: string;
}

export interface DashboardReply {
  status?: number;
  body: Record<string, unknown>;
  /** `Set-Cookie` values. */
  cookies?: string[];
  /** What the audit log's entry of the change says beside its route ("developer → read-only"). */
  auditDetail?: string;
}

/** The audit log's name of each change of the dashboard's own routes. */
const AUDITED_ACTIONS: Readonly<Record<string, string>> = {
  "POST /dashboard/sign-out": "sign_out",
  "POST /dashboard/sign-out-everywhere": "sign_out.everywhere",
  "POST /dashboard/totp": "totp.enrolment_started",
  "POST /dashboard/totp/confirm": "totp.enrolled",
  "POST /dashboard/passkeys": "passkey.registered",
  "POST /dashboard/invitations": "user.invited",
  "PUT /dashboard/users/{user_id}": "user.role_changed",
  "DELETE /dashboard/users/{user_id}": "user.removed",
};

type Result = APIGatewayProxyStructuredResultV2;
export type DashboardHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<Result>;

/**
 * The HTTP core of the dashboard's own routes (`/dashboard/…`), the API's rules with a session
 * instead of a key: JSON in and out, errors as the API's; the route's class in `roles.ts` decides
 * what it needs. Every route but the public ones needs a live session whose role may call it (and
 * its second factor, unless it is only about the session); every change comes from the dashboard's
 * own origin with the session's CSRF token, and is written to the audit log before it runs and
 * with its outcome after. Each call extends the session's idle expiry.
 */
export function dashboardRoute(
  handle: (request: DashboardRequest) => Promise<DashboardReply>,
): DashboardHandler {
  return async (event, context) => {
    const started = performance.now();
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    logger.resetKeys();
    logger.appendKeys({ request_id: requestId, lambda_request_id: context.awsRequestId });
    let result: Result;
    try {
      result = await run(handle, event, requestId);
    } catch (error) {
      if (!(error instanceof ApiError)) logger.error("Unexpected error", { error });
      result = errorResult(error, requestId);
      if (error instanceof TooManyAttempts) {
        result.headers = { ...result.headers, "retry-after": String(error.retryAfterSeconds) };
      }
    }
    result.headers = { ...result.headers, "cache-control": "no-store" };
    logger.info("request", { route: event.routeKey, status: result.statusCode });
    recordRequest(event.routeKey || "$default", result.statusCode ?? 200, performance.now() - started);
    flushMetrics();
    return result;
  };
}

/** The routes a session waiting for its second factor may still call. */
const BEFORE_SECOND_FACTOR = new Set(["GET /dashboard/session", "POST /dashboard/sign-out"]);

async function run(
  handle: (request: DashboardRequest) => Promise<DashboardReply>,
  event: APIGatewayProxyEventV2,
  requestId: string,
): Promise<Result> {
  const malformed = malformedPathParameter(event.pathParameters ?? {});
  if (malformed) throw notFound(malformed.resource);
  const method = event.requestContext?.http?.method ?? "GET";
  const change = method !== "GET";
  if (change && !originAllowed(event)) throw originRefused();

  const now = clock.now();
  const action = actionOf(event.routeKey);
  if (!action) throw new Error(`${event.routeKey} has no class in shared/dashboard/roles.ts`);
  let session = await loadSession(event, now);
  if (action !== "public") {
    if (!session) throw signedOut();
    if (change && !csrfMatches(session, event.headers?.["x-csrf-token"])) throw csrfRefused();
    if (session.second_factor === "required" && !BEFORE_SECOND_FACTOR.has(event.routeKey)) {
      throw secondFactorRequired();
    }
    if (!mayCall(session.role, event.routeKey)) throw forbidden();
    session = await touchSession(session, now);
  } else if (session && change && !csrfMatches(session, event.headers?.["x-csrf-token"])) {
    // A public route the session continues (a second factor): the session's token too.
    if (event.routeKey !== "POST /dashboard/sign-in" && event.routeKey !== "POST /dashboard/accept") {
      throw csrfRefused();
    }
  }

  const request: DashboardRequest = {
    event,
    requestId,
    now,
    body: parseBody(event),
    query: parseQuery(event.rawQueryString),
    path: (event.pathParameters ?? {}) as Record<string, string>,
    session: session as LoadedSession,
    optionalSession: session,
    baseUrl: baseUrlOf(event),
  };

  // A signed-in person's change is in the audit log before it runs.
  let entry: AuditEntry | undefined;
  const audited = AUDITED_ACTIONS[event.routeKey];
  if (change && action !== "public" && session && audited) {
    entry = await audit(
      {
        project_id: session.project_id,
        actor: { user_id: session.user_id, email: session.email, role: session.role },
        action: audited,
        ...requestFacts(event),
        environment: null,
        subject: subjectOf(event),
        detail: null,
      },
      now,
    );
  }
  let reply: DashboardReply;
  try {
    reply = await handle(request);
  } catch (error) {
    if (entry) await auditOutcome(entry, errorBody(error, requestId).status, clock.now());
    throw error;
  }
  if (entry) await auditOutcome(entry, reply.status ?? 200, clock.now(), reply.auditDetail);
  const result = toResult({ status: reply.status ?? 200, body: reply.body }, requestId);
  if (reply.cookies?.length) result.cookies = reply.cookies;
  return result;
}

/** `https://<host>` as the browser reached the API (`http://` for localhost, as the local stack serves). */
export function baseUrlOf(event: APIGatewayProxyEventV2): string {
  const host = event.headers?.host ?? event.requestContext?.domainName;
  if (!host) return process.env.API_URL ?? "http://localhost:3000";
  const local = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(host);
  return `${local ? "http" : "https"}://${host}`;
}
