import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getInvoice } from "../../shared/invoices/service.ts";

/** GET /invoices/{invoice_id} */
export const handler = api(
  async (request) => ok({ invoice: await getInvoice(request.caller, request.path.invoice_id ?? "") }),
  { expand: expandAnswer("invoice") },
);
