import { api } from "../../shared/http/api.ts";
import { readExpand } from "../../shared/http/expand.ts";
import { ok } from "../../shared/http/reply.ts";
import { getInvoice, INVOICE_EXPANSIONS } from "../../shared/invoices/service.ts";

/** GET /invoices/{invoice_id} */
export const handler = api(async (request) => {
  const expand = readExpand(request, INVOICE_EXPANSIONS);
  const invoice = await getInvoice(request.caller, request.path.invoice_id ?? "", expand);
  return ok({ invoice });
});
