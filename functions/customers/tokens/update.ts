import { PUBLIC_KEY_ACCESS } from "../../../shared/http/access.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { changeToken, NO_CUSTOMER_ACTION } from "../../../shared/tokens/service.ts";

/**
 * PUT /customers/{customer_id}/tokens/{token_id}: with `source`, attaches and verifies the card.
 * The merchant's server always gets `customer_action` (`{}` when there is nothing to do); the
 * shopper's browser or app only when there is something to do (the client libraries run any
 * `customer_action` present).
 */
export const handler = api(
  async (request) => {
    const { customer_id: customerId = "", token_id: tokenId = "" } = request.path;
    const { credential } = request.caller;
    const { token, customerAction } = await changeToken(
      request.caller,
      credential,
      customerId,
      tokenId,
      request.body,
    );
    if (credential === "public-key")
      return ok({ token, ...(customerAction ? { customer_action: customerAction } : {}) });
    return ok({ token, customer_action: customerAction ?? NO_CUSTOMER_ACTION });
  },
  { publicKey: PUBLIC_KEY_ACCESS.tokenSource },
);
