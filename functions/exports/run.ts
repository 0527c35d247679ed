import type { SQSEvent } from "aws-lambda";
import { readExportMessage } from "../../shared/exports/queue.ts";
import { runExport } from "../../shared/exports/run.ts";
import { sqsBatch } from "../../shared/webhooks/batch.ts";

/**
 * The export queue: one export's run per message. Done when it completed (or is gone); a failed run,
 * or one under way elsewhere, comes back with the message, then goes to the dead-letter queue.
 */
export const handler = async (event: SQSEvent) =>
  sqsBatch(event, async (record) => {
    const message = readExportMessage(record);
    if (!message) return true;
    const outcome = await runExport(message.scope, message.exportId);
    return outcome.kind === "completed" || outcome.kind === "missing";
  });
