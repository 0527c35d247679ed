import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { clearedCookie, endAllSessions } from "../../shared/dashboard/sessions.ts";

/** POST /dashboard/sign-out-everywhere: every session of the person ends, this one included. */
export const handler = dashboardRoute(async ({ session }) => {
  const ended = await endAllSessions(session.project_id, session.user_id);
  return { body: { sessions_ended: ended }, cookies: [clearedCookie()] };
});
