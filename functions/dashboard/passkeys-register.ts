import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { register } from "../../shared/dashboard/passkeys.ts";
import { presentSession, startSession } from "../../shared/dashboard/sessions.ts";
import { findUser, presentUser } from "../../shared/dashboard/users.ts";
import { notFound } from "../../shared/http/errors.ts";

/**
 * POST /dashboard/passkeys {credential}: registers the passkey; the authenticator just used counts as
 * the second factor, so the session is replaced by one where it is done.
 */
export const handler = dashboardRoute(async (request) => {
  const user = await findUser(request.session.email);
  if (!user) throw notFound("user");
  const registered = await register(request, user, request.body.credential);
  const next = await startSession(user, "done", request.now, request.session);
  return {
    body: { user: presentUser(registered), session: presentSession(next.session) },
    cookies: [next.cookie],
  };
});
