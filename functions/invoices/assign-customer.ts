import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { assignCustomer } from "../../shared/invoices/customer.ts";

/** POST /invoices/{invoice_id}/customers with `customer_id`: sets the invoice's customer, before any payment. */
export const handler = api(
  async (request) =>
    ok({ customer: await assignCustomer(request.caller, request.path.invoice_id ?? "", request.body) }),
  { expand: expandAnswer("customer") },
);
