import { NumberValue } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { type ItemKey, keys, STATISTICS_SHARDS } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import type { AuthorizationAttempt, PendingOperation, TransactionRecord } from "../payments/transaction.ts";

/** How an authorization attempt ended, as the statistics count it. */
export type CountedOutcome = "approved" | "declined" | "failed";

/** The outcome an attempt is counted under; undefined while it has none yet (a 3DS round). */
export function countedOutcome(attempt: AuthorizationAttempt): CountedOutcome | undefined {
  if (attempt.outcome === "approved" || attempt.outcome === "declined") return attempt.outcome;
  if (attempt.outcome === "not-done") return "failed";
  return undefined;
}

/** The hour of an instant, as the statistics' sort keys hold it (`2025-03-01T14`, UTC). */
export function hourOf(iso: string): string {
  return iso.slice(0, 13);
}

/** The attribute holding the approved amount of `currency` (an ISO 4217 code: 3 capital letters). */
export function amountAttribute(currency: string): string {
  return `amount_${currency}`;
}

/** The day of an instant, as the daily items' sort keys hold it (`2025-03-01`, UTC). */
export function dayOf(iso: string): string {
  return iso.slice(0, 10);
}

/** What a settlement's call came back with, as far as the count needs it (`core.ts` `CallResult`). */
export type SettledResult = { outcome: { status: string } } | { notDone: unknown };

/** A counted attempt: which configuration, how it ended, when (business time). */
interface Counted {
  configurationId: string;
  outcome: CountedOutcome;
  at: string;
}

/**
 * The attempt a settlement ends, if it is one to count: a card authorization's attempt as recorded
 * in `settled`, or a native APM payment's step, which records no attempt (its outcome is the call's:
 * confirmed, PENDING_CAPTURE → approved; refused → declined; nothing done → failed; more input asked
 * is no outcome yet, like a 3DS round).
 */
function countedOf(
  settled: TransactionRecord,
  pending: PendingOperation,
  result: SettledResult | undefined,
): Counted | undefined {
  if (pending.type === "authorization") {
    const attempt = settled.attempts?.find((kept) => kept.reference === pending.id);
    const outcome = attempt && countedOutcome(attempt);
    return attempt && outcome
      ? { configurationId: attempt.gateway_configuration_id, outcome, at: attempt.at }
      : undefined;
  }
  if (pending.type !== "native-payment" || !result) return undefined;
  const status = "notDone" in result ? "not-done" : result.outcome.status;
  const outcome =
    status === "pending-capture"
      ? "approved"
      : status === "declined"
        ? "declined"
        : status === "not-done"
          ? "failed"
          : undefined;
  // The step's operation, just recorded (a CUSTOMER_INPUT step records a request: not counted).
  const at = settled.operations.at(-1)?.created_at;
  return outcome && at ? { configurationId: settled.gateway_configuration_id, outcome, at } : undefined;
}

/**
 * The count of the authorization attempt that a settlement ends (the one of the reservation
 * `pending`, as recorded in `settled`; for a native APM step, as `result` tells): one update of its
 * configuration's hour and one of its day, on a shard picked at random, for the settlement's own
 * transaction. They commit only with the conditional write that ends the reservation, so an attempt
 * is counted once whatever repeats the settlement (a replayed request never reaches it, a
 * recovery's second settle fails its condition): no count without the outcome, and no outcome
 * without its count. Nothing to count for other operations, or for a round of 3DS (or a native
 * APM's request for more input) that leaves the attempt open.
 */
export function attemptCountWrites(
  settled: TransactionRecord,
  pending: PendingOperation,
  result?: SettledResult,
): TransactItem[] {
  const counted = countedOf(settled, pending, result);
  if (!counted) return [];
  const { configurationId, outcome, at } = counted;
  const shard = Math.floor(Math.random() * STATISTICS_SHARDS);
  const names: Record<string, string> = {
    "#attempts": "attempts",
    "#outcome": outcome,
    "#type": "type",
    "#configuration": "gateway_configuration_id",
  };
  const values: Record<string, unknown> = {
    ":one": 1,
    ":type": "statistics",
    ":configuration": configurationId,
  };
  const added = ["#attempts :one", "#outcome :one"];
  if (outcome === "approved") {
    names["#amount"] = amountAttribute(settled.currency);
    // Exact decimal: DynamoDB adds numbers of up to 38 digits without rounding.
    values[":amount"] = NumberValue.from(pending.amount);
    added.push("#amount :amount");
  }
  const update = (Key: ItemKey, start: "hour" | "day", value: string): TransactItem => ({
    Update: {
      TableName: config.tableName,
      Key,
      UpdateExpression: `ADD ${added.join(", ")} SET #type = :type, #configuration = :configuration, #start = :start`,
      ExpressionAttributeNames: { ...names, "#start": start },
      ExpressionAttributeValues: { ...values, ":start": value },
    },
  });
  // The day's item beside the hour's (on partitions of their own: each stays near 625 WCU/s at
  // 5,000 attempts/s), so that a daily read reads days, not 24 times as many hours.
  const scope = settled.project_id;
  return [
    update(keys.statistics(scope, shard, hourOf(at), configurationId), "hour", hourOf(at)),
    update(keys.statisticsDay(scope, shard, dayOf(at), configurationId), "day", dayOf(at)),
  ];
}
