import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { changeProjectSettings } from "../../shared/webhooks/project-settings.ts";

/** PUT /projects/{project_id} */
export const handler = api(async (request) => {
  const project = await changeProjectSettings(request.caller, request.path.project_id ?? "", request.body);
  return ok({ project });
});
