import { expandAnswer } from "../../../shared/expansion/answer.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { changeToken, NO_CUSTOMER_ACTION } from "../../../shared/tokens/service.ts";

/** PUT /customers/{customer_id}/tokens/{token_id}: with `source`, attaches and verifies the card. */
export const handler = api(
  async (request) => {
    const { customer_id: customerId = "", token_id: tokenId = "" } = request.path;
    const token = await changeToken(request.caller, customerId, tokenId, request.body);
    return ok({ token, customer_action: NO_CUSTOMER_ACTION });
  },
  { expand: expandAnswer("token") },
);
