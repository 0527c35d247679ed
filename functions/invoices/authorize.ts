import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { authorizeInvoice } from "../../shared/payments/authorize.ts";
import { paymentRequest } from "../../shared/payments/core.ts";

/** POST /invoices/{invoice_id}/authorize (the public key too: paying from the browser) */
export const handler = api(
  (request) => authorizeInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { publicKey: PUBLIC_KEY_ACCESS.payment },
);
