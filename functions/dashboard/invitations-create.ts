import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { invite, linkUrl, presentLink } from "../../shared/dashboard/links.ts";
import { readRole } from "../../shared/dashboard/people.ts";
import { normalEmail } from "../../shared/dashboard/users.ts";

/** POST /dashboard/invitations {email, role}: a one-time link, shown to the owner in this answer only. */
export const handler = dashboardRoute(async ({ session, body, now, baseUrl }) => {
  const email = normalEmail(body.email);
  const role = readRole(body.role);
  const { link, token } = await invite(session.project_id, email, role, session.user_id, now);
  return {
    body: { invitation: presentLink(link), link: linkUrl(baseUrl, token) },
    auditDetail: `${email} invited as ${role}`,
  };
});
