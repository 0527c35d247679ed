import { setSftpSettings } from "../../shared/exports/sftp-settings-service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** PUT /projects/{project_id}/sftp-settings: the secret is sealed, and answered never */
export const handler = api(async (request) => {
  await setSftpSettings(request.caller, request.path.project_id ?? "", request.body);
  return ok({});
});
