import type { SQSEvent } from "aws-lambda";
import { deliverRequestedExport } from "../../shared/exports/deliver.ts";
import { readExportMessage } from "../../shared/exports/queue.ts";
import { sqsBatch } from "../../shared/webhooks/batch.ts";

/**
 * The delivery queue: one export to its environment's SFTP server per message. A refusal (host key,
 * credentials) is recorded and done; a failure that may pass later comes back with the message.
 */
export const handler = async (event: SQSEvent) =>
  sqsBatch(event, async (record) => {
    const message = readExportMessage(record);
    if (!message) return true;
    return (await deliverRequestedExport(message.scope, message.exportId)) !== "failed";
  });
