import { getExport } from "../../shared/exports/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /exports/{export_id} */
export const handler = api(async (request) =>
  ok({ export: await getExport(request.caller, request.path.export_id ?? "") }),
);
