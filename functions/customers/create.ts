import { createCustomer } from "../../shared/customers/service.ts";
import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** POST /customers */
export const handler = api(
  async (request) => {
    const customer = await createCustomer(request.caller, request.body, (presented) =>
      request.commitWith(ok({ customer: presented })),
    );
    return ok({ customer });
  },
  // The whole change is one transaction: it claims the Idempotency-Key too (one round trip).
  { expand: expandAnswer("customer"), idempotency: "in-the-write" },
);
