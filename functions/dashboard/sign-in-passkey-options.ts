import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { authenticationOptions } from "../../shared/dashboard/passkeys.ts";
import { signedOut } from "../../shared/dashboard/sessions.ts";
import { findUser } from "../../shared/dashboard/users.ts";

/** POST /dashboard/sign-in/passkey/options: WebAuthn request options for the password step's session. */
export const handler = dashboardRoute(async (request) => {
  const session = request.optionalSession;
  if (!session) throw signedOut();
  const user = await findUser(session.email);
  if (!user || user.id !== session.user_id) throw signedOut();
  return { body: { options: await authenticationOptions({ ...request, session }, user) } };
});
