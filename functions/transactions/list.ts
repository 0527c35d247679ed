import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfTransactions } from "../../shared/payments/queries.ts";

/** GET /transactions */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "transaction");
    return pageReply("transactions", await pageOfTransactions(request.caller, page), page);
  },
  { expand: expandAnswer("transaction", "transactions") },
);
