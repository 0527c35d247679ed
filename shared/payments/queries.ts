import type { PageRequest } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { invoiceOf, transactionOf } from "./core.ts";
import { findTransactionRecord, listTransactions } from "./store.ts";
import { presentTransaction } from "./transaction.ts";

/** Reading transactions and refunds, as the API presents them. */

export async function getTransaction(caller: Caller, id: string) {
  const found = isId("transaction", id) ? await findTransactionRecord(caller.projectId, id) : undefined;
  if (!found) throw notFound("transaction", id);
  return presentTransaction(found.record);
}

export async function invoiceTransaction(caller: Caller, invoiceId: string) {
  const current = await transactionOf(caller, await invoiceOf(caller, invoiceId));
  return current ? presentTransaction(current.record) : null;
}

export async function pageOfTransactions(caller: Caller, page: PageRequest) {
  const result = await listTransactions(caller.projectId, page);
  return { ...result, items: result.items.map(presentTransaction) };
}

export async function getRefund(caller: Caller, transactionId: string, refundId: string) {
  const transaction = await getTransaction(caller, transactionId);
  const refund = transaction.refunds.find((candidate) => candidate.id === refundId);
  if (!refund) throw notFound("refund", refundId);
  return refund;
}
