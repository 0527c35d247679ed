import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfSubscriptionTransactions } from "../../shared/subscriptions/service.ts";

/** GET /subscriptions/{subscription_id}/transactions: the transactions of its renewals. */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "transaction");
    const result = await pageOfSubscriptionTransactions(
      request.caller,
      request.path.subscription_id ?? "",
      page,
    );
    return pageReply("transactions", result, page);
  },
  { expand: expandAnswer("transaction", "transactions") },
);
