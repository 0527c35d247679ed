import { expandAnswer } from "../../shared/expansion/answer.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { nativePayment } from "../../shared/payments/native.ts";

/** POST /invoices/{invoice_id}/native-payment (the public key too: the payment page's steps) */
export const handler = api(
  (request) => nativePayment(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { publicKey: PUBLIC_KEY_ACCESS.nativePayment, expand: expandAnswer("transaction") },
);
