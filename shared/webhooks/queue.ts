import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { DeliveryMessage } from "./delivery.ts";
import { webhookSettings } from "./settings.ts";

/**
 * The delivery queue: one message per delivery, sent by the stream consumer, consumed by the
 * delivery worker. One client per container; its endpoint comes from the SDK's own settings
 * (`AWS_ENDPOINT_URL_SQS` points it at the local stack's fauxqs).
 */
export const sqs = new SQSClient({});

export async function enqueueDelivery(message: DeliveryMessage): Promise<void> {
  await sqs.send(
    new SendMessageCommand({ QueueUrl: webhookSettings.queueUrl, MessageBody: JSON.stringify(message) }),
  );
}

/** Hides a received message for `seconds` (0: visible again at once), from now. */
export async function postpone(receiptHandle: string, seconds: number): Promise<void> {
  await sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: webhookSettings.queueUrl,
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
}
