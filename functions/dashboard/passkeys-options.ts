import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { registrationOptions } from "../../shared/dashboard/passkeys.ts";
import { findUser } from "../../shared/dashboard/users.ts";
import { notFound } from "../../shared/http/errors.ts";

/** POST /dashboard/passkeys/options: the WebAuthn options to register a passkey (the challenge kept with the session). */
export const handler = dashboardRoute(async (request) => {
  const user = await findUser(request.session.email);
  if (!user) throw notFound("user");
  return { body: { options: await registrationOptions(request, user) } };
});
