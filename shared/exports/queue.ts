import type { SQSRecord } from "aws-lambda";
import { logger } from "../observability/logger.ts";
import type { ExportMessage } from "./enqueue.ts";

/**
 * The messages of the export queues (`enqueue.ts` sends them): one export of one environment. A
 * message that is not one is logged and dropped (it would never become one).
 */
export function readExportMessage(record: SQSRecord): ExportMessage | undefined {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    body = undefined;
  }
  const { scope, exportId } = (typeof body === "object" && body !== null ? body : {}) as Record<
    string,
    unknown
  >;
  if (typeof scope === "string" && scope !== "" && typeof exportId === "string" && exportId !== "") {
    return { scope, exportId };
  }
  logger.error("Not an export message", { message_id: record.messageId });
  return undefined;
}
