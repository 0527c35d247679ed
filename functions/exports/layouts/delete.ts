import { removeLayout } from "../../../shared/exports/layouts.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";

/** DELETE /exports/layouts/{export_layout_id} */
export const handler = api(async (request) => {
  await removeLayout(request.caller, request.path.export_layout_id ?? "");
  return ok({});
});
