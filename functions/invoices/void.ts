import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { paymentRequest } from "../../shared/payments/core.ts";
import { voidInvoice } from "../../shared/payments/void.ts";

/** POST /invoices/{invoice_id}/void */
export const handler = api((request) => voidInvoice(paymentRequest(request), request.path.invoice_id ?? ""), {
  expand: expandAnswer("transaction"),
});
