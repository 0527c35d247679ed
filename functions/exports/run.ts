import type { SQSEvent } from "aws-lambda";
import { runQueuedExport } from "../../shared/exports/queue.ts";
import { sqsBatch } from "../../shared/webhooks/batch.ts";

/** The export queue: one export's run per message, retried while it fails, then dead-lettered. */
export const handler = async (event: SQSEvent) => sqsBatch(event, runQueuedExport);
