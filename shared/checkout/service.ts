import { config } from "../config.ts";
import type { HtmlReply } from "../http/reply.ts";
import { isEnvironmentProjectId, isId } from "../ids.ts";
import { findInvoice } from "../invoices/store.ts";
import { findTransactionRecord } from "../payments/store.ts";
import type { TransactionStatus } from "../payments/transaction.ts";
import { findEnvironment } from "../projects/environment.ts";
import { checkoutKeyMatches } from "./link.ts";
import {
  type CheckoutView,
  checkoutNotFoundPage,
  checkoutPage,
  type SettledOutcome,
  settledPage,
} from "./page.ts";

/**
 * `GET /checkout/{project_id}/{invoice_id}?key=…`: the invoice's hosted checkout page, reached
 * without credentials: the link's key is what lets the shopper see and pay it (`link.ts`). An
 * unknown environment or invoice and a missing or wrong key all get the same "not found" page.
 */
export async function showCheckout(projectId: string, invoiceId: string, key: unknown): Promise<HtmlReply> {
  if (!isEnvironmentProjectId(projectId) || !isId("invoice", invoiceId)) return checkoutNotFoundPage();
  const [environment, found] = await Promise.all([
    findEnvironment(projectId),
    findInvoice(projectId, invoiceId),
  ]);
  if (!environment || !found || !checkoutKeyMatches(found.invoice.checkout_key, key)) {
    return checkoutNotFoundPage();
  }
  const { invoice } = found;
  const view: CheckoutView = {
    apiUrl: config.apiUrl,
    projectId: environment.id,
    merchantName: environment.name,
    sandbox: environment.sandbox,
    invoiceId: invoice.id,
    name: invoice.name,
    amount: invoice.amount,
    currency: invoice.currency,
    details: (invoice.details ?? []).map((detail) => ({
      name: detail.name,
      quantity: detail.quantity,
      amount: detail.amount,
    })),
    returnUrl: invoice.return_url,
  };
  const transaction = invoice.transaction_id
    ? (await findTransactionRecord(projectId, invoice.transaction_id))?.record
    : undefined;
  // A payment that is waiting (a 3-D Secure answer, a provider) goes on from the form.
  if (!transaction || transaction.status === "waiting") return checkoutPage(view);
  return settledPage(view, SETTLED[transaction.status]);
}

/** What the page of an invoice says of its transaction, past `waiting`. */
const SETTLED: Record<Exclude<TransactionStatus, "waiting">, SettledOutcome> = {
  // Authorized (or pending with the provider): the shopper's part is done.
  pending: "paid",
  authorized: "paid",
  completed: "paid",
  failed: "declined",
  voided: "canceled",
  refunded: "refunded",
};
