import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { changeRole, readRole } from "../../shared/dashboard/people.ts";
import { presentUser } from "../../shared/dashboard/users.ts";

/** PUT /dashboard/users/{user_id} {role}: a person's new role (owners); their sessions end. */
export const handler = dashboardRoute(async ({ session, path, body }) => {
  const role = readRole(body.role);
  const user = await changeRole(session, path.user_id ?? "", role);
  return { body: { user: presentUser(user) }, auditDetail: `${user.email} is now ${role}` };
});
