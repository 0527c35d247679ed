import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { presentSession, startSession } from "../../shared/dashboard/sessions.ts";
import { confirmEnrolment } from "../../shared/dashboard/totp.ts";
import { findUser, presentUser } from "../../shared/dashboard/users.ts";
import { notFound } from "../../shared/http/errors.ts";

/**
 * POST /dashboard/totp/confirm {code}: the pending secret becomes the person's TOTP; the code just
 * given counts as the second factor, so the session is replaced by one where it is done.
 */
export const handler = dashboardRoute(async ({ session, body, now }) => {
  const user = await findUser(session.email);
  if (!user) throw notFound("user");
  await confirmEnrolment(user, body.code, now);
  const next = await startSession(user, "done", now, session);
  const enrolled = { ...user, totp_secret: user.totp_pending_secret ?? null };
  return {
    body: { user: presentUser(enrolled), session: presentSession(next.session) },
    cookies: [next.cookie],
  };
});
