import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getPlan } from "../../shared/plans/service.ts";

/** GET /plans/{plan_id} */
export const handler = api(async (request) =>
  ok({ plan: await getPlan(request.caller, request.path.plan_id ?? "") }),
);
