import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { removeInvoice } from "../../shared/invoices/service.ts";

/** DELETE /invoices/{invoice_id} */
export const handler = api(async (request) => {
  await removeInvoice(request.caller, request.path.invoice_id ?? "");
  return ok({});
});
