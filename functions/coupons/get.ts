import { getCoupon } from "../../shared/coupons/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /coupons/{coupon_id} */
export const handler = api(async (request) =>
  ok({ coupon: await getCoupon(request.caller, request.path.coupon_id ?? "") }),
);
