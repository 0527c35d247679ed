import { api } from "../../shared/http/api.ts";
import { authorizeInvoice, paymentRequest } from "../../shared/payments/service.ts";

/** POST /invoices/{invoice_id}/authorize */
export const handler = api((request) =>
  authorizeInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
);
