import { deleteSftpSettings } from "../../shared/exports/sftp-settings-service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** DELETE /projects/{project_id}/sftp-settings */
export const handler = api(async (request) => {
  await deleteSftpSettings(request.caller, request.path.project_id ?? "");
  return ok({});
});
