import {
  type AttributeValue,
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from "@aws-sdk/client-dynamodb";
import { TransactWriteCommand, type TransactWriteCommandInput } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { ApiError } from "../http/errors.ts";
import { dynamo } from "./client.ts";
import { distinctCountShards } from "./counters.ts";
import { IDEMPOTENCY_SORT_KEY } from "./keys.ts";

export type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/**
 * Which items of a cancelled transaction failed their condition (by index), so the caller can
 * tell "the resource is gone" from "someone else changed it first".
 */
export function failedConditions(error: unknown): number[] | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).flatMap((reason, index) =>
    reason.Code === "ConditionalCheckFailed" ? [index] : [],
  );
}

/**
 * The item that item `index` of a cancelled transaction found when its condition failed (asked for
 * with `ReturnValuesOnConditionCheckFailure: "ALL_OLD"`); undefined when there was none.
 */
export function cancelledItem(error: unknown, index: number): Record<string, unknown> | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  const item = error.CancellationReasons?.[index]?.Item as Record<string, AttributeValue> | undefined;
  return item ? unmarshall(item) : undefined;
}

/** Two transactions raced on the same item: retrying is safe, the conditions are re-evaluated. */
export function isTransactionConflict(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === "TransactionConflict")
  );
}

/** The item a failed conditional write found (`ReturnValuesOnConditionCheckFailure: ALL_OLD`). */
export function conditionFailedItem(error: unknown): Record<string, unknown> | undefined | null {
  if (!(error instanceof ConditionalCheckFailedException)) return null;
  const item = error.Item as Record<string, AttributeValue> | undefined;
  return item ? unmarshall(item) : undefined;
}

/**
 * A transaction's `Idempotency-Key` write found the key taken: nothing was written. `existing` is
 * what it found there (a route that claims its key in the write replays it, `idempotency.ts`).
 */
export class IdempotencyKeyTaken extends ApiError {
  constructor(readonly existing: Record<string, unknown> | undefined) {
    super(
      409,
      "request.idempotency-key.concurrent",
      "A request with this Idempotency-Key is being processed.",
    );
  }
}

const CONFLICT_RETRIES = 4;

/**
 * Runs a transaction, retrying when it raced another transaction on the same item
 * (`TransactionConflict`, which the SDK does not retry). Conditions are evaluated again on each
 * attempt, so a retry can never apply a change twice.
 */
export async function transactWrite(items: TransactItem[]): Promise<void> {
  // Nothing to write (e.g. no Idempotency-Key answer to store): DynamoDB refuses an empty transaction.
  if (items.length === 0) return;
  const sent = distinctCountShards(items);
  for (let attempt = 0; ; attempt++) {
    try {
      await dynamo.send(new TransactWriteCommand({ TransactItems: sent }));
      return;
    } catch (error) {
      const taken = failedConditions(error)?.find((index) => isIdempotencyCompletion(items[index]));
      // Another request took this Idempotency-Key (over, if ours ran past its lock): nothing was written.
      if (taken !== undefined) throw new IdempotencyKeyTaken(cancelledItem(error, taken));
      if (!isTransactionConflict(error)) throw error;
      if (attempt >= CONFLICT_RETRIES) {
        // Still racing a duplicate for its key: the caller retries, as with any key in progress.
        if (items.some(isIdempotencyCompletion)) throw new IdempotencyKeyTaken(undefined);
        throw error;
      }
      // Full jitter on an exponential base: 10, 20, 40, 80 ms at most.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** attempt));
    }
  }
}

function isIdempotencyCompletion(item: TransactItem | undefined): boolean {
  return (item?.Update?.Key?.sk ?? item?.Put?.Item?.sk) === IDEMPOTENCY_SORT_KEY;
}
