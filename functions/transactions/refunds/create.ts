import { api } from "../../../shared/http/api.ts";
import { paymentRequest, refundTransaction } from "../../../shared/payments/service.ts";

/** POST /transactions/{transaction_id}/refunds */
export const handler = api((request) =>
  refundTransaction(paymentRequest(request), request.path.transaction_id ?? "", request.body),
);
