import { getDefaultLayout } from "../../../shared/exports/layouts.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";

/** GET /exports/layouts/default/{export_type}: the environment's default, or the built-in layout */
export const handler = api(async (request) =>
  ok({ export_layout: await getDefaultLayout(request.caller, request.path.export_type ?? "") }),
);
