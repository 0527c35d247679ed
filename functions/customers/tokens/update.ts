import { expandAnswer } from "../../../shared/expansion/answer.ts";
import { PUBLIC_KEY_ACCESS } from "../../../shared/http/access.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { changeToken, NO_CUSTOMER_ACTION } from "../../../shared/tokens/service.ts";

/**
 * PUT /customers/{customer_id}/tokens/{token_id}: with `source`, attaches and verifies the card
 * (through 3DS rounds when the issuer asks). `customer_action` is `{}` when there is nothing to do;
 * the HTTP core shows the public key only an action to perform.
 */
export const handler = api(
  async (request) => {
    const { customer_id: customerId = "", token_id: tokenId = "" } = request.path;
    const { token, customerAction } = await changeToken(
      request.caller,
      request.caller.credential,
      customerId,
      tokenId,
      request.body,
    );
    return ok({ token, customer_action: customerAction ?? NO_CUSTOMER_ACTION });
  },
  { publicKey: PUBLIC_KEY_ACCESS.tokenSource, expand: expandAnswer("token") },
);
