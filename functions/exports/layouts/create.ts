import { createLayout } from "../../../shared/exports/layouts.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";

/** POST /exports/layouts */
export const handler = api(async (request) =>
  ok({ export_layout: await createLayout(request.caller, request.body) }),
);
