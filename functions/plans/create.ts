import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createPlan } from "../../shared/plans/service.ts";

/** POST /plans */
export const handler = api(
  async (request) => {
    const plan = await createPlan(request.caller, request.body, (presented) =>
      request.commitWith(ok({ plan: presented })),
    );
    return ok({ plan });
  },
  // The whole change is one transaction: it claims the Idempotency-Key too (one round trip).
  { idempotency: "in-the-write" },
);
