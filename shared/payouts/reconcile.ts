import { nowIn } from "../clock.ts";
import { batchGet } from "../db/batch.ts";
import { keys, type Scope } from "../db/keys.ts";
import { compareAmounts } from "../money.ts";
import { transactionFromItem } from "../payments/store.ts";
import type { TransactionRecord } from "../payments/transaction.ts";
import type { ProjectEnvironment } from "../projects/environment.ts";
import type { Payout, PayoutItem, Reconciliation } from "./payout.ts";
import { allPayoutItems } from "./store.ts";

/**
 * A provider's payout checked against our transactions: each item that moved a payment's money
 * (a sale, a refund, a chargeback) must belong to a transaction of ours, through the configuration
 * that paid it out (the PaymentIntent our connector stored as the transaction's gateway reference),
 * and match what that transaction settled. Done when the payout is made, and again whenever the
 * payout or its items are fetched: our side may change after (a refund that failed later), and a
 * payment recorded late is then found.
 */

/** Why an item does not match what our transaction settled (null when it does). */
export function providerItemMismatch(
  item: PayoutItem,
  transaction: TransactionRecord | undefined,
): string | null {
  if (item.type !== "sale" && item.type !== "refund" && item.type !== "chargeback") return null;
  if (!transaction)
    return `no transaction of this environment has the payment ${item.gateway_resource_id ?? ""}`.trim();
  const amount = item.amount.replace(/^-/, "");
  if (transaction.currency !== item.currency) {
    return `the transaction is in ${transaction.currency}, the item in ${item.currency}`;
  }
  if (item.type === "refund") {
    const refunded = transaction.refunds.some(
      (refund) => !refund.has_failed && compareAmounts(refund.amount, amount) === 0,
    );
    return refunded ? null : `the transaction has no refund of ${amount}`;
  }
  if (item.type === "chargeback")
    return transaction.chargedback ? null : "the transaction is not charged back";
  return compareAmounts(transaction.captured_amount, amount) === 0
    ? null
    : `the transaction captured ${transaction.captured_amount}, the item ${amount}`;
}

/** Our transactions of the items' PaymentIntents (through the configuration that made them). */
export async function transactionsOfPayments(
  scope: Scope,
  configurationId: string,
  paymentIntents: readonly string[],
): Promise<Map<string, TransactionRecord>> {
  const links = await batchGet(
    [...new Set(paymentIntents)].map((intent) => keys.gatewayPayment(scope, configurationId, intent)),
  );
  const byIntent = new Map(
    links.map((link) => [String(link.pk).split("#").at(-1) as string, String(link.transaction_id)]),
  );
  const records = (await batchGet([...new Set(byIntent.values())].map((id) => keys.resource(scope, id))))
    .filter((item) => item.type === "transaction")
    .map(transactionFromItem);
  const byId = new Map(records.map((record) => [record.id, record]));
  return new Map(
    [...byIntent].flatMap(([intent, id]) => {
      const record = byId.get(id);
      return record ? [[intent, record] as const] : [];
    }),
  );
}

/** The items as they check now: `reconciled` and `mismatch` against the transactions as they stand. */
export async function itemsCheckedNow(payout: Payout, items: readonly PayoutItem[]): Promise<PayoutItem[]> {
  const matched = await transactionsOfPayments(
    payout.project_id,
    payout.gateway_configuration_id,
    items.flatMap((item) => (item.gateway_resource_id ? [item.gateway_resource_id] : [])),
  );
  return items.map((item) => {
    const record = item.gateway_resource_id ? matched.get(item.gateway_resource_id) : undefined;
    const mismatch = providerItemMismatch(item, record);
    return {
      ...item,
      transaction_id: record?.id ?? item.transaction_id,
      reconciled: mismatch === null,
      mismatch,
    };
  });
}

/** The payout's reconciliation as it checks now (a provider's payout; the sandbox's as made). */
export async function reconciliationNow(
  payout: Payout,
  environment: ProjectEnvironment,
): Promise<Reconciliation> {
  if (payout.gateway_name === "sandbox") return payout.reconciliation;
  const items = await itemsCheckedNow(payout, await allPayoutItems(payout.project_id, payout.id));
  const unmatched = items.filter((item) => !item.reconciled).length;
  return {
    status: unmatched === 0 ? "matched" : "mismatched",
    checked_at: nowIn(environment).toISOString(),
    unmatched_items: unmatched,
    unpaid_transactions: [],
  };
}
