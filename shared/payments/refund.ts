import { invalidField, notFound } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import { isId, sharedUlidId } from "../ids.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { findInvoice } from "../invoices/store.ts";
import { compareAmounts } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import {
  checkAmount,
  invoiceOf,
  type PaymentRequest,
  paymentOf,
  requiredTransactionOf,
  wrongState,
} from "./core.ts";
import { followUp } from "./follow-up.ts";
import { refundInput } from "./schema.ts";
import { findTransactionRecord, type VersionedTransaction } from "./store.ts";
import { newRefund, presentTransaction, refundable } from "./transaction.ts";

/**
 * Refunds of a captured payment, whole or in parts (`amount`, default: what is left), never more
 * than captured in total, by invoice or by transaction.
 */

/** `POST /invoices/{id}/refunds` */
export async function refundInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const payment = await paymentOf(request.caller, invoiceId);
  const current = requiredTransactionOf(payment, "request.invoice.not-captured", "has no payment to refund.");
  return refund(request, payment.invoice, current, input);
}

/** `POST /transactions/{id}/refunds` */
export async function refundTransaction(
  request: PaymentRequest,
  transactionId: string,
  input: unknown,
): Promise<Reply> {
  if (!isId("transaction", transactionId)) throw notFound("transaction", transactionId);
  const scope = request.caller.projectId;
  // The transaction and its invoice (which shares its ULID) in one round trip.
  const [current, found] = await Promise.all([
    findTransactionRecord(scope, transactionId),
    findInvoice(scope, sharedUlidId("invoice", transactionId)),
  ]);
  if (!current) throw notFound("transaction", transactionId);
  const invoice =
    found?.invoice.id === current.record.invoice_id
      ? found.invoice
      : await invoiceOf(request.caller, current.record.invoice_id);
  return refund(request, invoice, current, input);
}

async function refund(
  request: PaymentRequest,
  invoice: Invoice,
  current: VersionedTransaction,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(refundInput, input);
  if (fields.amount) checkAmount("amount", fields.amount, invoice.currency);
  const record = await followUp(request, invoice, current, {
    type: "refund",
    amount: (record) => fields.amount ?? refundable(record),
    allowed: (record, amount) => {
      if (record.status !== "completed") throw wrongState(record, "refunded");
      if (compareAmounts(amount, refundable(record)) > 0) {
        throw invalidField(
          "amount",
          `must be at most ${refundable(record)}, what is left to refund`,
          "invalid-amount",
        );
      }
    },
    refund: (record, amount, now) =>
      newRefund(
        record,
        {
          amount,
          reason: fields.reason ?? null,
          information: fields.information ?? null,
          metadata: fields.metadata ?? {},
        },
        now,
      ),
  });
  return ok({ refund: record.refunds.at(-1), transaction: presentTransaction(record) });
}
