import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfCustomerSubscriptions } from "../../shared/subscriptions/service.ts";

/** GET /customers/{customer_id}/subscriptions */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "subscription");
    const result = await pageOfCustomerSubscriptions(request.caller, request.path.customer_id ?? "", page);
    return pageReply("subscriptions", result, page);
  },
  { expand: expandAnswer("subscription", "subscriptions") },
);
