import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { simulateRouting } from "../../shared/routing/service.ts";

/** POST /routing-rules/simulate */
export const handler = api(async (request) =>
  ok({ routing: await simulateRouting(request.caller, request.body) }),
);
