import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { clearedCookie, endSession } from "../../shared/dashboard/sessions.ts";

/** POST /dashboard/sign-out: this session ends; the cookie is cleared. */
export const handler = dashboardRoute(async ({ session }) => {
  await endSession(session);
  return { body: {}, cookies: [clearedCookie()] };
});
