import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { nativePayment } from "../../shared/payments/native.ts";

/** POST /invoices/{invoice_id}/native-payment */
export const handler = api(
  (request) => nativePayment(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
