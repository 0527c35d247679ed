import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { getDiscount } from "../../../shared/subscriptions/discounts.ts";

/** GET /subscriptions/{subscription_id}/discounts/{discount_id} */
export const handler = api(async (request) =>
  ok({
    discount: await getDiscount(
      request.caller,
      request.path.subscription_id ?? "",
      request.path.discount_id ?? "",
    ),
  }),
);
