import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfSubscriptions } from "../../shared/subscriptions/service.ts";

/** GET /subscriptions */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "subscription");
    return pageReply("subscriptions", await pageOfSubscriptions(request.caller, page), page);
  },
  { expand: expandAnswer("subscription", "subscriptions") },
);
