import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { authenticateInvoice } from "../../shared/payments/authenticate.ts";
import { paymentRequest } from "../../shared/payments/core.ts";

/** POST /invoices/{invoice_id}/three-d-s: 3-D Secure without paying (one operation with `/authenticate`). */
export const handler = api(
  (request) => authenticateInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
