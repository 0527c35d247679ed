import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { deleteDiscount } from "../../../shared/subscriptions/discounts.ts";

/** DELETE /subscriptions/{subscription_id}/discounts/{discount_id} */
export const handler = api(async (request) =>
  ok(
    await deleteDiscount(request.caller, request.path.subscription_id ?? "", request.path.discount_id ?? ""),
  ),
);
