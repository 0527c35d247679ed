import { expandAnswer } from "../../shared/expansion/answer.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { incrementInvoice } from "../../shared/payments/increment.ts";

/** POST /invoices/{invoice_id}/increment_authorization (the public key too: `incrementAuthorizationAmount`) */
export const handler = api(
  (request) => incrementInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { publicKey: PUBLIC_KEY_ACCESS.increment, expand: expandAnswer("transaction") },
);
