import { expandAnswer } from "../../../shared/expansion/answer.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { getToken, NO_CUSTOMER_ACTION } from "../../../shared/tokens/service.ts";

/** GET /customers/{customer_id}/tokens/{token_id} */
export const handler = api(
  async (request) => {
    const token = await getToken(request.caller, request.path.customer_id ?? "", request.path.token_id ?? "");
    return ok({ token, customer_action: NO_CUSTOMER_ACTION });
  },
  { expand: expandAnswer("token") },
);
