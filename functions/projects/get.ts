import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getProjectSettings } from "../../shared/webhooks/project-settings.ts";

/** GET /projects/{project_id} */
export const handler = api(async (request) => {
  const project = await getProjectSettings(request.caller, request.path.project_id ?? "");
  return ok({ project });
});
