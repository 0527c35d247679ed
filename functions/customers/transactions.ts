import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfCustomerTransactions } from "../../shared/payments/queries.ts";

/** GET /customers/{customer_id}/transactions */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "transaction");
    const result = await pageOfCustomerTransactions(request.caller, request.path.customer_id ?? "", page);
    return pageReply("transactions", result, page);
  },
  { expand: expandAnswer("transaction", "transactions") },
);
