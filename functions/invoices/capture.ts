import { api } from "../../shared/http/api.ts";
import { captureInvoice, paymentRequest } from "../../shared/payments/service.ts";

/** POST /invoices/{invoice_id}/capture */
export const handler = api((request) =>
  captureInvoice(paymentRequest(request), request.path.invoice_id ?? "", request.body),
);
