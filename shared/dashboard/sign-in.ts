import { ApiError } from "../http/errors.ts";
import { audit, requestFacts } from "./audit.ts";
import type { DashboardReply, DashboardRequest } from "./http.ts";
import {
  refuseWhileWaiting,
  unknownEmailCount,
  unknownEmailFailed,
  userFailed,
  userSucceeded,
} from "./lockout.ts";
import { PASSWORD_MAX_LENGTH, passwordMatches } from "./passwords.ts";
import {
  endSession,
  type LoadedSession,
  presentSession,
  type SecondFactorState,
  signedOut,
  startSession,
} from "./sessions.ts";
import { type DashboardUser, findUser, hasSecondFactor, normalEmail, presentUser } from "./users.ts";

/** Sign-in steps: the password, then (for a person who has one) the second factor. */
export const invalidCredentials = () =>
  new ApiError(401, "request.dashboard.invalid-credentials", "The email or password is not right.");

/** The answer of every sign-in step: the person and their new session (its cookie set). */
export async function signedIn(
  request: DashboardRequest,
  user: DashboardUser,
  secondFactor: SecondFactorState,
  action: string,
  replacing?: LoadedSession,
): Promise<DashboardReply> {
  // A session of someone else in this browser is ended; one of the same person is replaced.
  const previous = request.optionalSession;
  const replaced = replacing ?? (previous?.user_id === user.id ? previous : undefined);
  if (previous && previous !== replaced) await endSession(previous);
  const { session, cookie } = await startSession(user, secondFactor, request.now, replaced);
  await logSignIn(request, user, action, "succeeded", null);
  return { body: { user: presentUser(user), session: presentSession(session) }, cookies: [cookie] };
}

export function logSignIn(
  request: DashboardRequest,
  user: DashboardUser,
  action: string,
  outcome: "succeeded" | "failed",
  detail: string | null,
) {
  return audit(
    {
      project_id: user.project_id,
      actor: { user_id: user.id, email: user.email, role: user.role },
      action,
      ...requestFacts(request.event),
      environment: null,
      subject: { type: "user", id: user.id },
      outcome,
      status: outcome === "succeeded" ? 200 : 401,
      detail,
    },
    request.now,
  );
}

export async function signInWithPassword(request: DashboardRequest): Promise<DashboardReply> {
  const email = normalEmail(request.body.email);
  const password = typeof request.body.password === "string" ? request.body.password : "";
  if (password.length > PASSWORD_MAX_LENGTH) throw invalidCredentials();
  const user = await findUser(email);
  if (!user) {
    // As long as for a person, and counted the same: nothing tells the caller the email is unknown.
    refuseWhileWaiting(await unknownEmailCount(email), request.now);
    await passwordMatches(password, undefined);
    await unknownEmailFailed(email, request.now);
    throw invalidCredentials();
  }
  refuseWhileWaiting(user, request.now);
  const matches = await passwordMatches(password, user.password_hash ?? undefined);
  if (!matches || !user.password_hash) {
    await userFailed(user, request.now);
    await logSignIn(request, user, "sign_in.failed", "failed", "wrong password");
    throw invalidCredentials();
  }
  await userSucceeded(user);
  return signedIn(request, user, hasSecondFactor(user) ? "required" : "not-enrolled", "sign_in.password");
}

/** How a second factor is checked, and what its failure answers and records. */
export interface SecondFactor {
  /** Whether what the request sent is right for `user` (and, for a one-time value, uses it up). */
  verify(request: DashboardRequest & { session: LoadedSession }, user: DashboardUser): Promise<boolean>;
  /** What a failure is answered (an `invalidField` naming what was sent). */
  refused(): ApiError;
  /** The audit log's detail of a failure, and the action of a success. */
  failure: string;
  action: string;
}

/**
 * The second step of a sign-in, whichever the factor: the session waiting for it, its person, the
 * lockout's delays (failures count with the password's), then a new session with the factor done.
 */
export async function signInWithSecondFactor(
  request: DashboardRequest,
  factor: SecondFactor,
): Promise<DashboardReply> {
  const session = request.optionalSession;
  if (!session) throw signedOut();
  const user = await findUser(session.email);
  if (!user || user.id !== session.user_id) throw signedOut();
  refuseWhileWaiting(user, request.now);
  if (!(await factor.verify({ ...request, session }, user))) {
    await userFailed(user, request.now);
    await logSignIn(request, user, "sign_in.failed", "failed", factor.failure);
    throw factor.refused();
  }
  await userSucceeded(user);
  return signedIn(request, user, "done", factor.action, session);
}
