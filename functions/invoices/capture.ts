import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { captureInvoice } from "../../shared/payments/capture.ts";
import { paymentRequest } from "../../shared/payments/core.ts";

/** POST /invoices/{invoice_id}/capture (the public key too: paying from the browser) */
export const handler = api(
  (request) => captureInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { publicKey: PUBLIC_KEY_ACCESS.payment },
);
