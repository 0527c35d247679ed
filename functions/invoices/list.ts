import { api } from "../../shared/http/api.ts";
import { readExpand } from "../../shared/http/expand.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { INVOICE_EXPANSIONS, pageOfInvoices } from "../../shared/invoices/service.ts";

/** GET /invoices */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "invoice");
  const expand = readExpand(request, INVOICE_EXPANSIONS);
  return pageReply("invoices", await pageOfInvoices(request.caller, page, expand), page);
});
