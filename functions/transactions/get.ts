import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getTransaction } from "../../shared/payments/queries.ts";

/** GET /transactions/{transaction_id} */
export const handler = api(
  async (request) => {
    const transaction = await getTransaction(request.caller, request.path.transaction_id ?? "");
    return ok({ transaction });
  },
  { expand: expandAnswer("transaction") },
);
