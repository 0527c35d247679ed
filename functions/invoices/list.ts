import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfInvoices } from "../../shared/invoices/service.ts";

/** GET /invoices */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "invoice");
    return pageReply("invoices", await pageOfInvoices(request.caller, page), page);
  },
  { expand: expandAnswer("invoice", "invoices") },
);
