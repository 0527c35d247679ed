import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { changeInvoice } from "../../shared/invoices/service.ts";

/** PUT /invoices/{invoice_id} */
export const handler = api(
  async (request) => {
    const invoice = await changeInvoice(request.caller, request.path.invoice_id ?? "", request.body);
    return ok({ invoice });
  },
  { expand: expandAnswer("invoice") },
);
