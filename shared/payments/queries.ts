import { findCustomer } from "../customers/store.ts";
import type { PageRequest } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { paymentOf } from "./core.ts";
import {
  countCustomerTransactions,
  findTransactionRecord,
  listCustomerTransactions,
  listTransactions,
} from "./store.ts";
import { presentTransaction } from "./transaction.ts";

/** Reading transactions and refunds, as the API presents them. */

export async function getTransaction(caller: Caller, id: string) {
  const found = isId("transaction", id) ? await findTransactionRecord(caller.projectId, id) : undefined;
  if (!found) throw notFound("transaction", id);
  return presentTransaction(found.record);
}

export async function invoiceTransaction(caller: Caller, invoiceId: string) {
  const { current } = await paymentOf(caller, invoiceId);
  return current ? presentTransaction(current.record) : null;
}

export async function pageOfTransactions(caller: Caller, page: PageRequest) {
  const result = await listTransactions(caller.projectId, page);
  return { ...result, items: result.items.map(presentTransaction) };
}

/** `GET /customers/{id}/transactions`: the customer's transactions, a page at a time. */
export async function pageOfCustomerTransactions(caller: Caller, customerId: string, page: PageRequest) {
  if (!isId("customer", customerId)) throw notFound("customer", customerId);
  const [customer, result, totalCount] = await Promise.all([
    findCustomer(caller.projectId, customerId),
    listCustomerTransactions(caller.projectId, customerId, page),
    countCustomerTransactions(caller.projectId, customerId),
  ]);
  if (!customer) throw notFound("customer", customerId);
  return { ...result, totalCount, items: result.items.map(presentTransaction) };
}

export async function getRefund(caller: Caller, transactionId: string, refundId: string) {
  const transaction = await getTransaction(caller, transactionId);
  const refund = transaction.refunds.find((candidate) => candidate.id === refundId);
  if (!refund) throw notFound("refund", refundId);
  return refund;
}
