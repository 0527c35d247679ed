import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { removeUser } from "../../shared/dashboard/people.ts";

/** DELETE /dashboard/users/{user_id}: removes a person from the project (owners); their sessions end. */
export const handler = dashboardRoute(async ({ session, path }) => {
  const removed = await removeUser(session, path.user_id ?? "");
  return { body: {}, auditDetail: `${removed.email} removed` };
});
