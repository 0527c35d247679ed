import { expandAnswer } from "../../../shared/expansion/answer.ts";
import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { createToken, NO_CUSTOMER_ACTION } from "../../../shared/tokens/service.ts";

/** POST /customers/{customer_id}/tokens */
export const handler = api(
  async (request) => {
    const token = await createToken(
      request.caller,
      request.path.customer_id ?? "",
      request.body,
      (presented) => request.commitWith(ok({ token: presented, customer_action: NO_CUSTOMER_ACTION })),
    );
    return ok({ token, customer_action: NO_CUSTOMER_ACTION });
  },
  { expand: expandAnswer("token") },
);
