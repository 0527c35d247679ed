import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { customerOfSubscription } from "../../shared/subscriptions/service.ts";

/** GET /subscriptions/{subscription_id}/customers: the subscription's customer. */
export const handler = api(
  async (request) =>
    ok({ customer: await customerOfSubscription(request.caller, request.path.subscription_id ?? "") }),
  { expand: expandAnswer("customer") },
);
