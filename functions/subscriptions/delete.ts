import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { cancelSubscription } from "../../shared/subscriptions/service.ts";

/** DELETE /subscriptions/{subscription_id}: cancels now, at the period's end, or at `cancel_at` */
export const handler = api(
  async (request) =>
    ok({
      subscription: await cancelSubscription(request.caller, request.path.subscription_id ?? "", request),
    }),
  { expand: expandAnswer("subscription") },
);
