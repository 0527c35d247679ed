import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfItems } from "../../shared/payouts/service.ts";

/** GET /payouts/{payout_id}/items: listed under `items`, as the client libraries read them */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "payoutItem");
  return pageReply("items", await pageOfItems(request.caller, request.path.payout_id ?? "", page), page);
});
