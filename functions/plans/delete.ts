import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { endPlan } from "../../shared/plans/service.ts";

/** DELETE /plans/{plan_id}: ends the plan */
export const handler = api(async (request) => {
  await endPlan(request.caller, request.path.plan_id ?? "");
  return ok({});
});
