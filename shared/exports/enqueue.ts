import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { DynamoDBRecord } from "aws-lambda";
import {
  EXPORT_DELIVERY_ITEM_TYPE,
  EXPORT_DELIVERY_QUEUE_URL_VARIABLE,
  EXPORT_ITEM_TYPE,
  EXPORT_QUEUE_URL_VARIABLE,
} from "./names.ts";

/**
 * The relay of exports' work (a stream consumer, `functions/exports/enqueue.ts`): a requested export
 * inserted `pending` becomes a message on the export queue (its run); a delivery request becomes a
 * message on the delivery queue. The stream is read until this succeeds: nothing committed is lost.
 */
export interface ExportMessage {
  scope: string;
  exportId: string;
}

let sqs: SQSClient | undefined;

function queueUrl(variable: string): string {
  const url = process.env[variable];
  if (!url) throw new Error(`Missing required environment variable ${variable}`);
  return url;
}

export async function enqueueExportWork(record: DynamoDBRecord): Promise<void> {
  const image = record.dynamodb?.NewImage;
  if (!image) return;
  const item = unmarshall(image as unknown as Record<string, AttributeValue>);
  const variable =
    item.type === EXPORT_ITEM_TYPE
      ? EXPORT_QUEUE_URL_VARIABLE
      : item.type === EXPORT_DELIVERY_ITEM_TYPE
        ? EXPORT_DELIVERY_QUEUE_URL_VARIABLE
        : undefined;
  if (!variable) return;
  const message: ExportMessage = {
    scope: String(item.project_id),
    exportId: String(item.type === EXPORT_ITEM_TYPE ? item.id : item.export_id),
  };
  sqs ??= new SQSClient({});
  await sqs.send(
    new SendMessageCommand({ QueueUrl: queueUrl(variable), MessageBody: JSON.stringify(message) }),
  );
}
