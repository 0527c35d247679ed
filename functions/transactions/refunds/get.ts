import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { getRefund } from "../../../shared/payments/queries.ts";

/** GET /transactions/{transaction_id}/refunds/{refund_id} */
export const handler = api(async (request) => {
  const refund = await getRefund(
    request.caller,
    request.path.transaction_id ?? "",
    request.path.refund_id ?? "",
  );
  return ok({ refund });
});
