import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { refundInvoice } from "../../shared/payments/refund.ts";

/** POST /invoices/{invoice_id}/refunds */
export const handler = api(
  (request) => refundInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
