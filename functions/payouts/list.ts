import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfPayouts } from "../../shared/payouts/service.ts";

/** GET /payouts */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "payout");
  return pageReply("payouts", await pageOfPayouts(request.caller, page), page);
});
