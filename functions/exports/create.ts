import { requestExport } from "../../shared/exports/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** POST /exports: recorded pending; the table's stream starts its run in the background */
export const handler = api(async (request) =>
  ok({ export: await requestExport(request.caller, request.body) }),
);
