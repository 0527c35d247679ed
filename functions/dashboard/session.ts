import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { presentSession } from "../../shared/dashboard/sessions.ts";
import { findUser, presentUser } from "../../shared/dashboard/users.ts";

/** GET /dashboard/session: the signed-in person and their session (401 `request.dashboard.signed-out`). */
export const handler = dashboardRoute(async ({ session }) => {
  const user = await findUser(session.email);
  return { body: { user: user ? presentUser(user) : null, session: presentSession(session) } };
});
