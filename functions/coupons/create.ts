import { createCoupon } from "../../shared/coupons/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** POST /coupons */
export const handler = api(
  async (request) => {
    const coupon = await createCoupon(request.caller, request.body, (presented) =>
      request.commitWith(ok({ coupon: presented })),
    );
    return ok({ coupon });
  },
  // The whole change is one transaction: it claims the Idempotency-Key too (one round trip).
  { idempotency: "in-the-write" },
);
