import { api } from "../../shared/http/api.ts";
import { paymentRequest, refundInvoice } from "../../shared/payments/service.ts";

/** POST /invoices/{invoice_id}/refunds */
export const handler = api((request) =>
  refundInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
);
