import { pageOfAudit } from "../../shared/dashboard/audit.ts";
import { dashboardRoute } from "../../shared/dashboard/http.ts";

/** GET /dashboard/audit-log: the project's audit log, newest first (owners). */
export const handler = dashboardRoute(async ({ session, query }) => ({
  body: await pageOfAudit(session.project_id, query),
}));
