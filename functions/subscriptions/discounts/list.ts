import { api } from "../../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../../shared/http/listing.ts";
import { pageOfDiscounts } from "../../../shared/subscriptions/discounts.ts";

/** GET /subscriptions/{subscription_id}/discounts */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "discount");
  const result = await pageOfDiscounts(request.caller, request.path.subscription_id ?? "", page);
  return pageReply("discounts", result, page);
});
