import { nowIn } from "../clock.ts";
import { batchGet } from "../db/batch.ts";
import { keys, type Scope } from "../db/keys.ts";
import { eventWrite } from "../events/event.ts";
import { runDailyExports } from "../exports/daily.ts";
import { compareAmounts, fromMinorUnits, toMinorUnits } from "../money.ts";
import { logger } from "../observability/logger.ts";
import { transactionFromItem } from "../payments/store.ts";
import type { TransactionRecord } from "../payments/transaction.ts";
import { findEnvironment } from "../projects/environment.ts";
import type { DailyCloseJob } from "../scheduling/port.ts";
import { feesOf } from "./fees.ts";
import { derivedId, type Payout, type PayoutItem, presentPayout, type Reconciliation } from "./payout.ts";
import { closeProviderPayouts } from "./providers.ts";
import type { SettlementLine } from "./settlement.ts";
import { closeDueAt } from "./settlement.ts";
import {
  allPayoutItems,
  dayHasLines,
  findPayout,
  insertPayout,
  linesOfDay,
  putPayoutItems,
  replaceReconciliation,
} from "./store.ts";

/**
 * The daily close of an environment's business day (the `daily-close` job, due at 00:00 of the next
 * day on the environment's clock): (1) the sandbox gateway pays out what it settled that day, one
 * payout per gateway configuration and currency, each line of the day an item of it; (1b) the Stripe
 * configurations' payouts made since the last close are read (`providers.ts`); (2) the day's
 * exports run (`runDailyExports`, `shared/exports/daily.ts`). The week before is checked for a day
 * whose lines no payout holds (its close never scheduled), which is then paid out.
 *
 * Safe to run twice, late, or after a crash half-way: a payout's id follows from the environment,
 * the day, the configuration and the currency, its items' ids from the lines they pay out; items
 * are written first (the same content each time), the payout last, on the condition that it does
 * not exist. A run that finds the payout made checks it again against the day's lines: a line
 * settled after the payout was made (a container whose view of the sandbox clock was late) is
 * reported on the payout's reconciliation, never paid twice nor lost silently.
 */
export const SANDBOX_BANK = "Sandbox Bank";

export async function runDailyClose(job: DailyCloseJob): Promise<string> {
  const environment = await findEnvironment(job.scope);
  if (!environment) return "no-environment";
  const lines = await linesOfDay(job.scope, job.day);
  const outcomes: string[] = [];
  for (const group of groupsOf(lines))
    outcomes.push(await payOut(job.scope, job.day, group, nowIn(environment)));
  const caughtUp = await closeEarlierDays(job.scope, job.day, nowIn(environment));
  const providers = await closeProviderPayouts(environment);
  await runDailyExports(job.scope, job.day);
  const count = (outcome: string) => outcomes.filter((found) => found === outcome).length;
  return `payouts: ${count("created")} created, ${count("existing")} existing, ${count("deleted")} deleted; Stripe payouts: ${providers}; earlier days: ${caughtUp} made`;
}

/** A day's lines by gateway configuration and currency: one payout each. */
function groupsOf(lines: readonly SettlementLine[]): SettlementLine[][] {
  const groups = new Map<string, SettlementLine[]>();
  for (const line of lines) {
    const key = `${line.gateway_configuration_id}|${line.currency}`;
    const group = groups.get(key);
    if (group) group.push(line);
    else groups.set(key, [line]);
  }
  return [...groups.values()];
}

/**
 * How many days before the closed one are checked for settled lines no payout holds: a day whose
 * close was never scheduled (its only settlements' scheduler calls failed) is paid out by a later
 * day's close, within a week.
 */
export const LOOKBACK_DAYS = 7;

async function closeEarlierDays(scope: Scope, day: string, now: Date): Promise<number> {
  let made = 0;
  for (let back = 1; back <= LOOKBACK_DAYS; back++) {
    const earlier = new Date(Date.parse(`${day}T00:00:00.000Z`) - back * 24 * 3600 * 1000)
      .toISOString()
      .slice(0, 10);
    if (!(await dayHasLines(scope, earlier))) continue;
    for (const group of groupsOf(await linesOfDay(scope, earlier))) {
      const first = group[0] as SettlementLine;
      // Made (or deleted) by its own close: checking it again is that close's, not this one's.
      if (
        await findPayout(
          scope,
          sandboxPayoutId(scope, earlier, first.gateway_configuration_id, first.currency),
        )
      )
        continue;
      if ((await payOut(scope, earlier, group, now)) === "created") made += 1;
    }
  }
  return made;
}

/** The payout id of a day, configuration and currency: the same on every run. */
export function sandboxPayoutId(
  scope: Scope,
  day: string,
  configurationId: string,
  currency: string,
): string {
  return derivedId("payout", closeDueAt(day), `${scope}|${day}|${configurationId}|${currency}`);
}

function itemIdOf(scope: Scope, payoutId: string, line: SettlementLine): string {
  return derivedId("payoutItem", new Date(line.settled_at), `${scope}|${payoutId}|${line.id}`);
}

async function payOut(
  scope: Scope,
  day: string,
  lines: SettlementLine[],
  now: Date,
): Promise<"created" | "existing" | "deleted"> {
  const first = lines[0] as SettlementLine;
  const payoutId = sandboxPayoutId(scope, day, first.gateway_configuration_id, first.currency);
  const existing = await findPayout(scope, payoutId);
  if (existing) {
    if (existing.payout.deleted_at !== null) return "deleted";
    await recheck(existing, lines, now);
    return "existing";
  }
  const transactions = await transactionsOf(scope, lines);
  const items = lines.map((line) => itemOf(scope, payoutId, line, transactions.get(line.transaction_id)));
  const payout = payoutOf(scope, day, payoutId, first, items, now);
  await putPayoutItems(items);
  const outcome = await insertPayout(
    payout,
    eventWrite(scope, "payout.created", { payout: presentPayout(payout) }, now),
  );
  logger.info("Sandbox payout made", { payout_id: payoutId, day, items: items.length, outcome });
  return outcome === "created" ? "created" : "existing";
}

async function transactionsOf(
  scope: Scope,
  lines: SettlementLine[],
): Promise<Map<string, TransactionRecord>> {
  const ids = [...new Set(lines.map((line) => line.transaction_id))];
  const found = await batchGet(ids.map((id) => keys.resource(scope, id)));
  const records = found.filter((item) => item.type === "transaction").map(transactionFromItem);
  return new Map(records.map((record) => [record.id, record]));
}

/** Why the line does not match what its transaction settled; null when it does. */
export function mismatchOf(line: SettlementLine, transaction: TransactionRecord | undefined): string | null {
  if (!transaction) return `transaction ${line.transaction_id} does not exist`;
  if (transaction.currency !== line.currency) {
    return `the transaction is in ${transaction.currency}, the item in ${line.currency}`;
  }
  if (line.movement === "refund") {
    const refund = transaction.refunds.find((found) => found.id === line.refund_id);
    if (!refund) return `the transaction has no refund ${line.refund_id ?? ""}`.trim();
    if (refund.has_failed) return `refund ${refund.id} failed after it settled`;
    if (compareAmounts(refund.amount, line.amount) !== 0) {
      return `refund ${refund.id} is ${refund.amount}, the item ${line.amount}`;
    }
    return null;
  }
  if (line.movement === "chargeback" && !transaction.chargedback)
    return "the transaction is not charged back";
  if (compareAmounts(transaction.captured_amount, line.amount) !== 0) {
    return `the transaction captured ${transaction.captured_amount}, the item ${line.amount}`;
  }
  return null;
}

function itemOf(
  scope: Scope,
  payoutId: string,
  line: SettlementLine,
  transaction: TransactionRecord | undefined,
): PayoutItem {
  const minor = toMinorUnits(line.amount, line.currency);
  const fees = feesOf(line, minor);
  const signed = line.movement === "sale" ? minor : -minor;
  const mismatch = mismatchOf(line, transaction);
  return {
    id: itemIdOf(scope, payoutId, line),
    project_id: scope,
    payout_id: payoutId,
    transaction_id: line.transaction_id,
    type: line.movement,
    gateway_resource_id: line.gateway_reference,
    amount: fromMinorUnits(signed, line.currency),
    fees: fees.total,
    currency: line.currency,
    metadata: {
      invoice_id: line.invoice_id,
      settled_at: line.settled_at,
      ...(line.refund_id ? { refund_id: line.refund_id } : {}),
    },
    created_at: closeDueAt(line.day).toISOString(),
    breakdown: fees.breakdown,
    reconciled: mismatch === null,
    mismatch,
  };
}

function payoutOf(
  scope: Scope,
  day: string,
  id: string,
  first: SettlementLine,
  items: PayoutItem[],
  now: Date,
): Payout {
  const { currency } = first;
  const minor = (amount: string) => toMinorUnits(amount.replace(/^-/, ""), currency);
  const of = (type: PayoutItem["type"]) => items.filter((item) => item.type === type);
  const volume = (list: PayoutItem[]) => list.reduce((sum, item) => sum + minor(item.amount), 0n);
  const [sales, refunds, chargebacks] = [of("sale"), of("refund"), of("chargeback")];
  const fees = items.reduce((sum, item) => sum + minor(item.fees), 0n);
  const amount = volume(sales) - volume(refunds) - volume(chargebacks) - fees;
  const written = (value: bigint) => fromMinorUnits(value, currency);
  const unmatched = items.filter((item) => !item.reconciled).length;
  return {
    id,
    project_id: scope,
    status: "paid",
    amount: written(amount),
    currency,
    metadata: {},
    bank_name: SANDBOX_BANK,
    bank_summary: `SANDBOX PAYOUT ${day}`,
    sales_transactions: sales.length,
    sales_volume: written(volume(sales)),
    refunds_transactions: refunds.length,
    refunds_volume: written(volume(refunds)),
    chargebacks_transactions: chargebacks.length,
    chargebacks_volume: written(volume(chargebacks)),
    fees: written(fees),
    adjustments: written(0n),
    reserve: written(0n),
    settled_at: closeDueAt(day).toISOString(),
    created_at: now.toISOString(),
    gateway_configuration_id: first.gateway_configuration_id,
    gateway_name: "sandbox",
    gateway_resource_id: `sandbox-payout-${day}`,
    business_day: day,
    item_count: items.length,
    reconciliation: {
      status: unmatched === 0 ? "matched" : "mismatched",
      checked_at: now.toISOString(),
      unmatched_items: unmatched,
      unpaid_transactions: [],
    },
    deleted_at: null,
  };
}

/**
 * A payout made before, checked again against its day's lines: lines no item pays out (settled
 * after the payout was made) are reported as unpaid transactions.
 */
async function recheck(
  existing: NonNullable<Awaited<ReturnType<typeof findPayout>>>,
  lines: SettlementLine[],
  now: Date,
): Promise<void> {
  const { payout } = existing;
  const items = await allPayoutItems(payout.project_id, payout.id);
  const paid = new Set(items.map((item) => item.id));
  const unpaid = [
    ...new Set(
      lines
        .filter((line) => !paid.has(itemIdOf(payout.project_id, payout.id, line)))
        .map((line) => line.transaction_id),
    ),
  ].sort();
  const unmatched = items.filter((item) => !item.reconciled).length;
  const reconciliation: Reconciliation = {
    status: unmatched === 0 && unpaid.length === 0 ? "matched" : "mismatched",
    checked_at: now.toISOString(),
    unmatched_items: unmatched,
    unpaid_transactions: unpaid,
  };
  const same =
    reconciliation.status === payout.reconciliation.status &&
    reconciliation.unpaid_transactions.join() === payout.reconciliation.unpaid_transactions.join();
  if (same) return;
  const outcome = await replaceReconciliation(existing, reconciliation);
  if (outcome === "changed") throw new Error(`Payout ${payout.id} changed while it was checked: run again`);
  logger.warn("A payout no longer matches its day's settlements", {
    payout_id: payout.id,
    unpaid_transactions: unpaid,
  });
}
