import { PUBLIC_KEY_ACCESS } from "../../../shared/http/access.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { changeToken, NO_CUSTOMER_ACTION } from "../../../shared/tokens/service.ts";

/**
 * PUT /customers/{customer_id}/tokens/{token_id}: with `source`, attaches and verifies the card. The
 * public key may only attach a source (`makeCardToken`).
 */
export const handler = api(
  async (request) => {
    const { customer_id: customerId = "", token_id: tokenId = "" } = request.path;
    const token = await changeToken(request.caller, customerId, tokenId, request.body);
    return ok({ token, customer_action: NO_CUSTOMER_ACTION });
  },
  { publicKey: PUBLIC_KEY_ACCESS.tokenSource },
);
