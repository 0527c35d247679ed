import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { payoutInvoice } from "../../shared/payments/payout.ts";

/** POST /invoices/{invoice_id}/payout: the invoice's amount paid out to a card or customer token. */
export const handler = api(
  (request) => payoutInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
  { expand: expandAnswer("transaction") },
);
