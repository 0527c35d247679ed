import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { clock } from "../clock.ts";
import type { AuthenticatedCaller } from "../http/auth.ts";
import { ApiError, invalidField } from "../http/errors.ts";
import { findEnvironment } from "../projects/environment.ts";
import { type AuditEntry, audit, requestFacts, subjectOf } from "./audit.ts";
import { CHANGES_NOTHING, fieldsRefused, mayCall } from "./roles.ts";
import {
  csrfMatches,
  csrfRefused,
  type DashboardSession,
  loadSession,
  originAllowed,
  sessionCookieOf,
  signedOut,
} from "./sessions.ts";

/**
 * Calls of the existing API from the dashboard: no Authorization header, the session cookie, the
 * environment in `X-Environment` (`sandbox` or `live`), and on every change the session's token in
 * `X-CSRF-Token`. The session and the environment are read at once (the environment from the
 * container's cache mostly). The role must allow the route (`roles.ts`); live needs the second
 * factor; a session still waiting for its second factor opens nothing.
 */
export function hasSessionCookie(event: APIGatewayProxyEventV2): boolean {
  return sessionCookieOf(event) !== undefined;
}

export const forbidden = () =>
  new ApiError(403, "request.dashboard.forbidden", "Your role in this project does not allow this action.");

export const secondFactorRequired = () =>
  new ApiError(
    403,
    "request.dashboard.second-factor-required",
    "Give your second factor (a TOTP code or a passkey) first: live data, and everything while a sign-in waits for it, need it.",
  );

export const originRefused = () =>
  new ApiError(403, "request.dashboard.origin", "Changes are only accepted from the dashboard's own origin.");

/** What a change a session makes is: `started` in the audit log before it runs. */
export interface SessionCaller extends AuthenticatedCaller {
  credential: "dashboard";
  user: { id: string; email: string; role: DashboardSession["role"] };
  sessionId: string;
}

export async function authenticateSession(event: APIGatewayProxyEventV2): Promise<SessionCaller> {
  const wanted = event.headers?.["x-environment"];
  if (wanted !== "sandbox" && wanted !== "live") {
    throw invalidField("X-Environment", "must be sandbox or live with a dashboard session");
  }
  const now = clock.now();
  const [session, environment] = await Promise.all([
    loadSession(event, now),
    // The environment id follows from the cookie's root project id; read beside the session.
    environmentOfCookie(event, wanted === "sandbox"),
  ]);
  if (!session) throw signedOut();
  const method = event.requestContext?.http?.method ?? "GET";
  if (method !== "GET") {
    if (!originAllowed(event)) throw originRefused();
    if (!csrfMatches(session, event.headers?.["x-csrf-token"])) throw csrfRefused();
  }
  if (session.second_factor === "required") throw secondFactorRequired();
  if (wanted === "live" && session.second_factor !== "done") throw secondFactorRequired();
  if (!mayCall(session.role, event.routeKey)) throw forbidden();
  if (!environment || environment.root_project_id !== session.project_id) throw signedOut();
  return {
    projectId: environment.id,
    sandbox: environment.sandbox,
    environment,
    credential: "dashboard",
    user: { id: session.user_id, email: session.email, role: session.role },
    sessionId: session.id,
  };
}

async function environmentOfCookie(event: APIGatewayProxyEventV2, sandbox: boolean) {
  const root = sessionCookieOf(event)?.split(".")[0];
  if (!root || !/^proj_[0-9A-HJKMNP-TV-Z]{26}$/.test(root)) return undefined;
  return findEnvironment(sandbox ? `test-${root}` : root);
}

/** Whether the request is a change the audit log records (every non-GET but searches and simulations). */
export function isAuditedChange(event: APIGatewayProxyEventV2): boolean {
  const method = event.requestContext?.http?.method ?? "GET";
  return method !== "GET" && !CHANGES_NOTHING.has(event.routeKey);
}

/** The entry of a session's change, written before the handler runs. */
export function auditStart(caller: SessionCaller, event: APIGatewayProxyEventV2): Promise<AuditEntry> {
  return audit(
    {
      project_id: caller.environment.root_project_id,
      actor: { user_id: caller.user.id, email: caller.user.email, role: caller.user.role },
      action: "api.request",
      ...requestFacts(event),
      environment: caller.projectId,
      subject: subjectOf(event),
      detail: null,
    },
    clock.now(),
  );
}

/**
 * Refuses what a session's role may not send to a route it may call (`fieldsRefused`): 403 naming
 * the first such field, before any work.
 */
export function checkFields(caller: SessionCaller, event: APIGatewayProxyEventV2, body: unknown): void {
  if (typeof body !== "object" || body === null) return;
  const [refused] = fieldsRefused(caller.user.role, event.routeKey, body as Record<string, unknown>);
  if (refused === undefined) return;
  throw new ApiError(
    403,
    "request.dashboard.forbidden",
    `Your role in this project does not allow changing ${refused} here.`,
    [{ name: refused, message: "is not yours to change with your role" }],
  );
}
