import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { createDiscount } from "../../../shared/subscriptions/discounts.ts";

/** POST /subscriptions/{subscription_id}/discounts: from a coupon (`coupon_id`) or ad hoc (`preview=true`: nothing made) */
export const handler = api(async (request) =>
  ok(await createDiscount(request.caller, request.path.subscription_id ?? "", request)),
);
