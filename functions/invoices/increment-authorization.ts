import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { incrementInvoice } from "../../shared/payments/increment.ts";

/** POST /invoices/{invoice_id}/increment_authorization */
export const handler = api(
  (request) => incrementInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
