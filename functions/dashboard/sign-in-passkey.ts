import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { refuseWhileWaiting, userFailed, userSucceeded } from "../../shared/dashboard/lockout.ts";
import { verifyPasskey } from "../../shared/dashboard/passkeys.ts";
import { signedOut } from "../../shared/dashboard/sessions.ts";
import { logSignIn, signedIn } from "../../shared/dashboard/sign-in.ts";
import { findUser } from "../../shared/dashboard/users.ts";
import { invalidField } from "../../shared/http/errors.ts";

/** POST /dashboard/sign-in/passkey {credential}: the second factor by passkey; the session is replaced. */
export const handler = dashboardRoute(async (request) => {
  const session = request.optionalSession;
  if (!session) throw signedOut();
  const user = await findUser(session.email);
  if (!user || user.id !== session.user_id) throw signedOut();
  refuseWhileWaiting(user, request.now);
  if (!(await verifyPasskey({ ...request, session }, user, request.body.credential))) {
    await userFailed(user, request.now);
    await logSignIn(request, user, "sign_in.failed", "failed", "passkey not verified");
    throw invalidField("credential", "could not be verified", "invalid-credential");
  }
  await userSucceeded(user);
  return signedIn(request, user, "done", "sign_in.passkey", session);
});
