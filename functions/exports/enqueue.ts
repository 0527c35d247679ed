import type { DynamoDBStreamEvent } from "aws-lambda";
import { enqueueRequestedExport } from "../../shared/exports/queue.ts";
import { streamBatch } from "../../shared/webhooks/batch.ts";

/** The table's stream, filtered to requested exports as they are inserted: one queued run each. */
export const handler = async (event: DynamoDBStreamEvent) => streamBatch(event, enqueueRequestedExport);
