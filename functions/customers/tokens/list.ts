import { expandAnswer } from "../../../shared/expansion/answer.ts";
import { api } from "../../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../../shared/http/listing.ts";
import { pageOfTokens } from "../../../shared/tokens/service.ts";

/** GET /customers/{customer_id}/tokens */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "token");
    return pageReply(
      "tokens",
      await pageOfTokens(request.caller, request.path.customer_id ?? "", page),
      page,
    );
  },
  { expand: expandAnswer("token", "tokens") },
);
