import { endCoupon } from "../../shared/coupons/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** DELETE /coupons/{coupon_id}: ends the coupon */
export const handler = api(async (request) => {
  await endCoupon(request.caller, request.path.coupon_id ?? "");
  return ok({});
});
