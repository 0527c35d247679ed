import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { changeSubscription } from "../../shared/subscriptions/service.ts";

/** PUT /subscriptions/{subscription_id} */
export const handler = api(
  async (request) =>
    ok(await changeSubscription(request.caller, request.path.subscription_id ?? "", request)),
  { expand: expandAnswer("subscription") },
);
