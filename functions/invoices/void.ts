import { api } from "../../shared/http/api.ts";
import { paymentRequest, voidInvoice } from "../../shared/payments/service.ts";

/** POST /invoices/{invoice_id}/void */
export const handler = api((request) => voidInvoice(paymentRequest(request), request.path.invoice_id ?? ""));
