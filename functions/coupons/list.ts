import { COUPON_CURSOR, pageOfCoupons } from "../../shared/coupons/service.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /coupons */
export const handler = api(async (request) => {
  const page = readPageRequest(request, COUPON_CURSOR);
  return pageReply("coupons", await pageOfCoupons(request.caller, page), page);
});
