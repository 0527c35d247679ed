import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getRules } from "../../shared/routing/service.ts";

/** GET /routing-rules */
export const handler = api(async (request) => ok({ routing_rules: await getRules(request.caller) }));
