import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createSubscription } from "../../shared/subscriptions/service.ts";

/** POST /subscriptions */
export const handler = api(
  async (request) => {
    const subscription = await createSubscription(request.caller, request.body, (presented) =>
      request.commitWith(ok({ subscription: presented })),
    );
    return ok({ subscription });
  },
  { expand: expandAnswer("subscription") },
);
