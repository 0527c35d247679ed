import type { ClockedEnvironment } from "../clock.ts";
import { config } from "../config.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import { logger } from "../observability/logger.ts";
import type { TransactionRecord } from "../payments/transaction.ts";
import { scheduleJob } from "../scheduling/index.ts";
import { dailyCloseScheduleName } from "../scheduling/port.ts";

/**
 * What the sandbox gateway settles, as it settles it: each money movement (a capture as a sale, a
 * refund, a chargeback) becomes a settlement line, written in the very DynamoDB transaction that
 * settles the operation (no round trip of its own: a line exists if and only if the settlement
 * committed), under its environment's business day (`keys.settlementLine`), so that the day's close
 * reads the day in one query and pays each line out once (`close.ts`).
 *
 * The close of a day is scheduled when a container settles the day's first money movement, through
 * any gateway (at most one scheduler call per container and environment-day), beside the
 * settlement's write: scheduling is idempotent (the schedule's name is the environment and the day),
 * so every container may do it. The close reads the providers' payouts too (`providers.ts`).
 */
export type LineType = "sale" | "refund" | "chargeback";

export interface SettlementLine {
  /** The operation that moved the money (`op_…`), with the type for a chargeback of a capture. */
  id: string;
  project_id: string;
  /** The business day (`YYYY-MM-DD`, the environment's clock) it settled on. */
  day: string;
  movement: LineType;
  transaction_id: string;
  invoice_id: string;
  /** The refund (`ref_…`) of a refund line. */
  refund_id: string | null;
  /** The sandbox gateway's reference of the payment (the transaction's `gateway_reference`). */
  gateway_reference: string;
  gateway_configuration_id: string;
  gateway_name: string;
  currency: string;
  /** What moved, positive, in the currency's major unit. */
  amount: string;
  card_scheme: string | null;
  card_type: string | null;
  payment_method: string;
  settled_at: string;
}

export const SETTLEMENT_GATEWAY = "sandbox";
const ENTITY = "settlement-line";

/** The business day of a moment: its UTC date on the environment's clock. */
export function businessDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** When the close of `day` is due: 00:00 of the next day, on the environment's clock. */
export function closeDueAt(day: string): Date {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + 24 * 3600 * 1000);
}

/**
 * The money a settlement moves, from the transaction before (`held`) and after (`next`) it: a
 * successful capture is a sale (and a chargeback when the gateway reports it charged back), a
 * successful refund a refund. Every gateway's: the day's close is scheduled for any of them (it
 * reads the providers' payouts too); only the sandbox gateway's are written as lines
 * (`settlementLineWrites`): providers report their own payouts.
 */
export function settlementLinesOf(
  held: TransactionRecord,
  next: TransactionRecord,
  now: Date,
): SettlementLine[] {
  const day = businessDay(now);
  const added = next.operations.filter(
    (op) => op.success && !held.operations.some((old) => old.id === op.id),
  );
  const line = (id: string, type: LineType, amount: string, refundId: string | null): SettlementLine => ({
    id,
    project_id: next.project_id,
    day,
    movement: type,
    transaction_id: next.id,
    invoice_id: next.invoice_id,
    refund_id: refundId,
    gateway_reference: next.gateway_reference ?? next.id,
    gateway_configuration_id: next.gateway_configuration_id,
    gateway_name: next.gateway_name,
    currency: next.currency,
    amount,
    card_scheme: next.routing?.facts.card_scheme ?? null,
    card_type: next.routing?.facts.card_type ?? null,
    payment_method: next.payment_method ?? "card",
    settled_at: now.toISOString(),
  });
  return added.flatMap((op) => {
    if (op.type === "capture") {
      const chargeback = next.chargedback && !held.chargedback;
      return [
        line(op.id, "sale", op.amount, null),
        ...(chargeback ? [line(`${op.id}-chargeback`, "chargeback", op.amount, null)] : []),
      ];
    }
    if (op.type === "refund") {
      const refund = next.refunds.find((item) => !held.refunds.some((old) => old.id === item.id));
      return [line(op.id, "refund", op.amount, refund?.id ?? null)];
    }
    return [];
  });
}

/** The writes of the sandbox gateway's lines, for the settlement's transaction (keyed by operation). */
export function settlementLineWrites(lines: readonly SettlementLine[]): TransactItem[] {
  return lines
    .filter((line) => line.gateway_name === SETTLEMENT_GATEWAY)
    .map((line) => ({
      Put: {
        TableName: config.tableName,
        Item: { ...keys.settlementLine(line.project_id, line.day, line.id), type: ENTITY, ...line },
      },
    }));
}

/** A settlement line as read from the table. */
export function lineFromItem(item: Record<string, unknown>): SettlementLine {
  const { pk, sk, type, ...line } = item;
  return line as unknown as SettlementLine;
}

/** The environment-days whose close this container already scheduled. */
const scheduledCloses = new Set<string>();

/**
 * Schedules the close of the day of `lines` (once per container and environment-day). Never throws:
 * the money already moved; a failed call is logged and made again with the next line of the day.
 */
export async function scheduleDailyClose(
  scope: Scope,
  environment: ClockedEnvironment,
  lines: readonly SettlementLine[],
): Promise<void> {
  const days = [...new Set(lines.map((line) => line.day))];
  await Promise.all(
    days.map(async (day) => {
      const key = `${scope}#${day}`;
      if (scheduledCloses.has(key)) return;
      scheduledCloses.add(key);
      try {
        await scheduleJob(
          {
            name: dailyCloseScheduleName(scope, day),
            at: closeDueAt(day),
            job: { kind: "daily-close", scope, day },
          },
          environment,
        );
      } catch (error) {
        scheduledCloses.delete(key);
        logger.error("Scheduling a daily close failed: the next settlement of the day tries again", {
          error,
          project_id: scope,
          day,
        });
      }
    }),
  );
}

/** Forgets what this container scheduled (tests that remove scheduled jobs). */
export function forgetScheduledCloses(): void {
  scheduledCloses.clear();
}
