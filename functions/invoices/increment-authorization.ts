import { api } from "../../shared/http/api.ts";
import { incrementInvoice, paymentRequest } from "../../shared/payments/service.ts";

/** POST /invoices/{invoice_id}/increment_authorization */
export const handler = api((request) =>
  incrementInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
);
