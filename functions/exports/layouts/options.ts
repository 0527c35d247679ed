import { layoutOptions } from "../../../shared/exports/layouts.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";

/** GET /exports/layouts/options/{export_type}: the columns and formats a layout of the type may choose */
export const handler = api(async (request) =>
  ok({ export_layout_configuration_options: layoutOptions(request.path.export_type ?? "") }),
);
