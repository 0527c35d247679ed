import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { DynamoDBRecord, SQSRecord } from "aws-lambda";
import { logger } from "../observability/logger.ts";
import * as z from "../validation/zod.ts";
import { EXPORT_QUEUE_URL_VARIABLE } from "./names.ts";
import { runExport } from "./run.ts";

/**
 * How a requested export reaches its run: the export item is committed `pending`; the table's stream
 * (filtered to inserted requested exports, `lib/topology.ts`) puts one message on the export queue;
 * the queue's worker runs it. A crash anywhere loses nothing: the stream is read until it succeeds,
 * a message comes back until its run completes (then the dead-letter queue), and a run already
 * completed or under way elsewhere is left alone.
 */
export { EXPORT_QUEUE_URL_VARIABLE };

let sqs: SQSClient | undefined;

const messageSchema = z.object({
  scope: z.string().check(z.minLength(1)),
  exportId: z.string().check(z.minLength(1)),
});

export async function enqueueRequestedExport(record: DynamoDBRecord): Promise<void> {
  const image = record.dynamodb?.NewImage;
  if (!image) return;
  const item = unmarshall(image as unknown as Record<string, AttributeValue>);
  const queueUrl = process.env[EXPORT_QUEUE_URL_VARIABLE];
  if (!queueUrl) throw new Error(`Missing required environment variable ${EXPORT_QUEUE_URL_VARIABLE}`);
  sqs ??= new SQSClient({});
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify({ scope: String(item.project_id), exportId: String(item.id) }),
    }),
  );
}

/** One queued run: done (true) when the export completed, failed for good, or is not ours to run. */
export async function runQueuedExport(record: SQSRecord): Promise<boolean> {
  const parsed = z.safeParse(messageSchema, JSON.parse(record.body));
  if (!parsed.success) {
    logger.error("Not an export message", { message_id: record.messageId });
    return true;
  }
  const outcome = await runExport(parsed.data.scope, parsed.data.exportId);
  // A failed run is retried when the message comes back; one under way elsewhere, likewise.
  return (
    outcome.kind === "completed" ||
    outcome.kind === "missing" ||
    (outcome.kind === "failed" && !outcome.retry)
  );
}
