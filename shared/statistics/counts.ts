import { NumberValue } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { keys, STATISTICS_SHARDS } from "../db/keys.ts";
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

/**
 * The count of the authorization attempt that a settlement ends (the one of the reservation
 * `pending`, as recorded in `settled`): one update of its configuration's hour on a shard picked at
 * random, for the settlement's own transaction. It commits only with the conditional write that
 * ends the reservation, so an attempt is counted once whatever repeats the settlement (a replayed
 * request never reaches it, a recovery's second settle fails its condition): no count without the
 * outcome, and no outcome without its count. Nothing to count for other operations, or for a round
 * of 3DS that leaves the attempt open.
 */
export function attemptCountWrites(settled: TransactionRecord, pending: PendingOperation): TransactItem[] {
  if (pending.type !== "authorization") return [];
  const attempt = settled.attempts?.find((kept) => kept.reference === pending.id);
  const outcome = attempt && countedOutcome(attempt);
  if (!attempt || !outcome) return [];
  const shard = Math.floor(Math.random() * STATISTICS_SHARDS);
  const names: Record<string, string> = {
    "#attempts": "attempts",
    "#outcome": outcome,
    "#type": "type",
    "#configuration": "gateway_configuration_id",
    "#hour": "hour",
  };
  const values: Record<string, unknown> = {
    ":one": 1,
    ":type": "statistics",
    ":configuration": attempt.gateway_configuration_id,
    ":hour": hourOf(attempt.at),
  };
  const added = ["#attempts :one", "#outcome :one"];
  if (outcome === "approved") {
    names["#amount"] = amountAttribute(settled.currency);
    // Exact decimal: DynamoDB adds numbers of up to 38 digits without rounding.
    values[":amount"] = NumberValue.from(pending.amount);
    added.push("#amount :amount");
  }
  return [
    {
      Update: {
        TableName: config.tableName,
        Key: keys.statistics(settled.project_id, shard, hourOf(attempt.at), attempt.gateway_configuration_id),
        UpdateExpression: `ADD ${added.join(", ")} SET #type = :type, #configuration = :configuration, #hour = :hour`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
  ];
}
