import type {
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from "aws-lambda";
import { logger } from "../observability/logger.ts";
import { flushMetrics } from "../observability/metrics.ts";

/**
 * Partial batch responses (`reportBatchItemFailures`) for the functions Lambda feeds in batches.
 * The records of a batch are handled concurrently; one that fails (or throws) is reported by its
 * identifier and the others count as done:
 *
 * - SQS: the failed messages stay in the queue (and come back when their visibility ends), the
 *   others are deleted;
 * - DynamoDB streams: Lambda starts again from the lowest failed sequence number, so the records
 *   after it are seen again (handlers are idempotent).
 *
 * A thrown error is logged with the record's identifier, never the record (it may carry data).
 * The metrics the batch recorded are printed once, when it is done (`shared/observability/metrics.ts`).
 */
export async function sqsBatch(
  event: SQSEvent,
  handle: (record: SQSRecord) => Promise<boolean>,
): Promise<SQSBatchResponse> {
  try {
    const done = await Promise.all(
      event.Records.map((record) => settle(handle(record), { message_id: record.messageId })),
    );
    return {
      batchItemFailures: event.Records.filter((_, index) => !done[index]).map((record) => ({
        itemIdentifier: record.messageId,
      })),
    };
  } finally {
    flushMetrics();
  }
}

export async function streamBatch(
  event: DynamoDBStreamEvent,
  handle: (record: DynamoDBRecord) => Promise<void>,
): Promise<DynamoDBBatchResponse> {
  try {
    const done = await Promise.all(
      event.Records.map((record) =>
        settle(
          handle(record).then(() => true),
          { sequence_number: record.dynamodb?.SequenceNumber },
        ),
      ),
    );
    return {
      batchItemFailures: event.Records.flatMap((record, index) =>
        done[index] ? [] : [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? "" }],
      ),
    };
  } finally {
    flushMetrics();
  }
}

async function settle(outcome: Promise<boolean>, identifier: Record<string, unknown>): Promise<boolean> {
  try {
    return await outcome;
  } catch (error) {
    logger.error("Batch record failed", { ...identifier, error });
    return false;
  }
}
