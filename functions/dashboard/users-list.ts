import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { listUsers, presentUser } from "../../shared/dashboard/users.ts";

/** GET /dashboard/users: the project's people (owners). */
export const handler = dashboardRoute(async ({ session }) => ({
  body: { users: (await listUsers(session.project_id)).map(presentUser) },
}));
