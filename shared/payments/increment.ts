import { conflict } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import { parseInput } from "../validation/parse.ts";
import { checkAmount, type PaymentRequest, paymentOf, requiredTransactionOf, wrongState } from "./core.ts";
import { followUp } from "./follow-up.ts";
import { incrementInput } from "./schema.ts";
import { presentTransaction } from "./transaction.ts";

/**
 * `POST /invoices/{id}/increment_authorization`: raises an authorization by `amount`, when the
 * invoice allows increments (its gateway supports them), the authorization asked for them
 * (`incremental=true`) and it is not captured yet.
 */
export async function incrementInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(incrementInput, input);
  const payment = await paymentOf(request.caller, invoiceId);
  const { invoice } = payment;
  checkAmount("amount", fields.amount, invoice.currency);
  const current = requiredTransactionOf(
    payment,
    "request.invoice.not-authorized",
    "has no authorization to increment.",
  );
  const record = await followUp(request, invoice, current, {
    type: "increment",
    amount: () => fields.amount,
    allowed: (record) => {
      if (!invoice.incremental)
        throw conflict(
          "request.invoice.not-incremental",
          `Invoice ${invoice.id} does not allow incremental authorizations.`,
        );
      if (!record.incremental) {
        throw conflict(
          "request.transaction.not-incremental",
          `Transaction ${record.id} was not authorized with incremental=true.`,
        );
      }
      if (record.status !== "authorized") throw wrongState(record, "incremented");
    },
  });
  return ok({ transaction: presentTransaction(record) });
}
