import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getSubscription } from "../../shared/subscriptions/service.ts";

/** GET /subscriptions/{subscription_id} */
export const handler = api(
  async (request) =>
    ok({ subscription: await getSubscription(request.caller, request.path.subscription_id ?? "") }),
  { expand: expandAnswer("subscription") },
);
