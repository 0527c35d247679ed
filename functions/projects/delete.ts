import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { deleteProject } from "../../shared/projects/deletion.ts";

/** DELETE /projects/{project_id}: the caller's own environment, or one it supervises. */
export const handler = api(async (request) => {
  await deleteProject(request.caller, request.path.project_id ?? "");
  return ok({});
});
