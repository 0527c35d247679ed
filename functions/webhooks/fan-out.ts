import type { DynamoDBStreamEvent } from "aws-lambda";
import { streamBatch } from "../../shared/webhooks/batch.ts";
import { batchUrlReader, fanOutRecord } from "../../shared/webhooks/fan-out.ts";

/** The table's stream, filtered to inserted events and resends: one queued delivery per destination. */
export const handler = async (event: DynamoDBStreamEvent) => {
  const webhookUrl = batchUrlReader();
  return streamBatch(event, (record) => fanOutRecord(record, webhookUrl));
};
