import { getLayout } from "../../../shared/exports/layouts.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";

/** GET /exports/layouts/{export_layout_id} */
export const handler = api(async (request) =>
  ok({ export_layout: await getLayout(request.caller, request.path.export_layout_id ?? "") }),
);
