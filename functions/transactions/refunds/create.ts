import { expandAnswer } from "../../../shared/expansion/answer.ts";
import { api } from "../../../shared/http/api.ts";
import { paymentRequest } from "../../../shared/payments/core.ts";
import { refundTransaction } from "../../../shared/payments/refund.ts";

/** POST /transactions/{transaction_id}/refunds */
export const handler = api(
  (request) => refundTransaction(paymentRequest(request), request.path.transaction_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
