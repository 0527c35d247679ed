import { api } from "../../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../../shared/http/listing.ts";
import { pageOfAddons } from "../../../shared/subscriptions/addons.ts";

/** GET /subscriptions/{subscription_id}/addons */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "addon");
  const result = await pageOfAddons(request.caller, request.path.subscription_id ?? "", page);
  return pageReply("addons", result, page);
});
