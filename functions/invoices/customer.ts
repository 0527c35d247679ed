import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { customerOfInvoice } from "../../shared/invoices/customer.ts";

/** GET /invoices/{invoice_id}/customers: the invoice's customer. */
export const handler = api(
  async (request) => ok({ customer: await customerOfInvoice(request.caller, request.path.invoice_id ?? "") }),
  { expand: expandAnswer("customer") },
);
