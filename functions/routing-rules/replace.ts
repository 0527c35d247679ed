import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { replaceRoutingRules } from "../../shared/routing/service.ts";

/** PUT /routing-rules */
export const handler = api(async (request) =>
  ok({ routing_rules: await replaceRoutingRules(request.caller, request.body) }),
);
