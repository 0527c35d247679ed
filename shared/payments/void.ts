import { ok, type Reply } from "../http/reply.ts";
import { cancelAutoCapture } from "./auto-capture.ts";
import { type PaymentRequest, paymentOf, requiredTransactionOf, wrongState } from "./core.ts";
import { followUp } from "./follow-up.ts";
import { presentTransaction } from "./transaction.ts";

/** `POST /invoices/{id}/void`: releases the whole authorization, which must not be captured yet. */
export async function voidInvoice(request: PaymentRequest, invoiceId: string): Promise<Reply> {
  const payment = await paymentOf(request.caller, invoiceId);
  const { invoice } = payment;
  const current = requiredTransactionOf(
    payment,
    "request.invoice.not-authorized",
    "has no authorization to void.",
  );
  const record = await followUp(request, invoice, current, {
    type: "void",
    amount: (record) => record.authorized_amount,
    allowed: (record) => {
      if (record.status !== "authorized") throw wrongState(record, "voided");
    },
  });
  await cancelAutoCapture(record);
  return ok({ transaction: presentTransaction(record) });
}
