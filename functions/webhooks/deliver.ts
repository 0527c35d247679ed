import type { SQSEvent } from "aws-lambda";
import { sqsBatch } from "../../shared/webhooks/batch.ts";
import { handleDeliveryMessage } from "../../shared/webhooks/worker.ts";

/** The delivery queue: one signed POST per message, retried on the backoff schedule, then dead-lettered. */
export const handler = async (event: SQSEvent) => sqsBatch(event, (record) => handleDeliveryMessage(record));
