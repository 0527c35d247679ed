import { api } from "../../shared/http/api.ts";
import { html } from "../../shared/http/reply.ts";
import { DASHBOARD_CONTENT_SECURITY_POLICY, DASHBOARD_PAGE } from "./page.ts";

/** GET /dashboard: the merchant dashboard's page; the app it loads signs its user in. */
export const handler = api(
  async () => html(200, DASHBOARD_PAGE, { contentSecurityPolicy: DASHBOARD_CONTENT_SECURITY_POLICY }),
  { auth: "none" },
);
