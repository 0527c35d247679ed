import { expandAnswer } from "../../shared/expansion/answer.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { captureInvoice } from "../../shared/payments/capture.ts";
import { paymentRequest } from "../../shared/payments/core.ts";

/** POST /invoices/{invoice_id}/capture */
export const handler = api(
  (request) => captureInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  // The shopper's browser or app pays with the public key (`payments/core.ts`: what it is answered).
  { publicKey: PUBLIC_KEY_ACCESS.payment, expand: expandAnswer("transaction") },
);
