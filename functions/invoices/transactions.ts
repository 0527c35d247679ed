import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { invoiceTransaction } from "../../shared/payments/queries.ts";

/** GET /invoices/{invoice_id}/transactions: the invoice's single transaction (null before any payment). */
export const handler = api(
  async (request) => {
    const transaction = await invoiceTransaction(request.caller, request.path.invoice_id ?? "");
    return ok({ transaction });
  },
  { expand: expandAnswer("transaction") },
);
