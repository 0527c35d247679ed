import type { DynamoDBStreamEvent } from "aws-lambda";
import { enqueueExportWork } from "../../shared/exports/enqueue.ts";
import { streamBatch } from "../../shared/webhooks/batch.ts";

/** The table's stream, filtered to requested exports and delivery requests: one queued message each. */
export const handler = async (event: DynamoDBStreamEvent) => streamBatch(event, enqueueExportWork);
