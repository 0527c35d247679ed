import { DOCS_CONTENT_SECURITY_POLICY, DOCS_PAGE } from "../../shared/docs/page.ts";
import { api } from "../../shared/http/api.ts";
import { html } from "../../shared/http/reply.ts";

/** GET /docs: the API reference page (Swagger UI over GET /openapi.json). */
export const handler = api(
  async () => html(200, DOCS_PAGE, { contentSecurityPolicy: DOCS_CONTENT_SECURITY_POLICY }),
  { auth: "none" },
);
