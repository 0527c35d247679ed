import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { changePlan } from "../../shared/plans/service.ts";

/** PUT /plans/{plan_id} */
export const handler = api(async (request) =>
  ok({ plan: await changePlan(request.caller, request.path.plan_id ?? "", request.body) }),
);
