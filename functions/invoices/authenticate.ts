import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { authenticateInvoice } from "../../shared/payments/authenticate.ts";
import { paymentRequest } from "../../shared/payments/core.ts";

/**
 * POST /invoices/{invoice_id}/authenticate: the same operation as `/three-d-s`, answered as authorize
 * answers. The Node and Ruby clients send it to the literal `/invoices/:invoice_id/authenticate`,
 * which names no invoice: the HTTP core answers it 404 `resource.invoice.not-found` (its path
 * parameter's shape) before this handler runs.
 */
export const handler = api(
  (request) => authenticateInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
