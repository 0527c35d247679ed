import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { refuseWhileWaiting, userFailed, userSucceeded } from "../../shared/dashboard/lockout.ts";
import { signedOut } from "../../shared/dashboard/sessions.ts";
import { logSignIn, signedIn } from "../../shared/dashboard/sign-in.ts";
import { useCode } from "../../shared/dashboard/totp.ts";
import { findUser } from "../../shared/dashboard/users.ts";
import { invalidField } from "../../shared/http/errors.ts";

/**
 * POST /dashboard/sign-in/totp {code}: the second factor after the password. Counted with the
 * password's failures (growing delays, lockout); a code is accepted once. The session is replaced.
 */
export const handler = dashboardRoute(async (request) => {
  const session = request.optionalSession;
  if (!session) throw signedOut();
  const user = await findUser(session.email);
  if (!user || user.id !== session.user_id) throw signedOut();
  refuseWhileWaiting(user, request.now);
  if (!(await useCode(user, request.body.code, request.now))) {
    await userFailed(user, request.now);
    await logSignIn(request, user, "sign_in.failed", "failed", "wrong or reused TOTP code");
    throw invalidField("code", "is not a valid code now, or was used already", "invalid-code");
  }
  await userSucceeded(user);
  return signedIn(request, user, "done", "sign_in.totp", session);
});
