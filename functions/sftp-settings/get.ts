import { getSftpSettings } from "../../shared/exports/sftp-settings-service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /projects/{project_id}/sftp-settings: never the secret */
export const handler = api(async (request) =>
  ok({ sftp_settings: await getSftpSettings(request.caller, request.path.project_id ?? "") }),
);
