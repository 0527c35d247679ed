import {
  DeleteMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSEvent, SQSMessageAttributes, SQSRecord } from "aws-lambda";
import type { QueueWorkerDeclaration } from "../topology.ts";

/**
 * The local stand-in for a Lambda event source mapping on an SQS queue (with
 * `reportBatchItemFailures`): `maxConcurrency` pollers long-poll the queue, each call the worker
 * with the very `SQSEvent` Lambda sends for up to `batchSize` messages, and delete the messages it
 * did not report failed. A thrown error, a time-out, or a report naming a message that is not in
 * the batch fails the whole batch, as in Lambda. A failed message is left alone: it comes back when
 * its visibility timeout ends (which the worker may have changed), and SQS moves it to the
 * dead-letter queue past `maxReceiveCount`.
 */
export interface QueuePollerOptions {
  sqsEndpoint: string;
  queueUrl: string;
  queueArn: string;
  worker: QueueWorkerDeclaration;
  invoke: (event: SQSEvent) => Promise<unknown>;
  errorLog?: (message: string, error?: unknown) => void;
}

export interface QueuePoller {
  /** Finishes the batches in hand, then stops receiving. */
  stop(): Promise<void>;
}

/** Short long polls, so that a stop never waits long. */
const WAIT_TIME_SECONDS = 1;
const RETRY_DELAY_MS = 1_000;

export function startQueuePoller(options: QueuePollerOptions): QueuePoller {
  const errorLog = options.errorLog ?? ((message, error) => console.error(message, error ?? ""));
  const region = process.env.AWS_REGION ?? "us-east-1";
  const sqs = new SQSClient({ region, endpoint: options.sqsEndpoint });
  const { worker } = options;
  let stopped = false;

  async function pollOnce(): Promise<void> {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: worker.batchSize,
        WaitTimeSeconds: WAIT_TIME_SECONDS,
        MessageSystemAttributeNames: ["All"],
        MessageAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) return;
    const records = Messages.map((message) => toLambdaRecord(message, options.queueArn, region));
    let failed: Set<string> | "all";
    try {
      failed = reportedFailures(await options.invoke({ Records: records }), records);
      if (failed === "all")
        errorLog(`Queue worker ${worker.handler} reported an unknown message; the batch failed`);
    } catch (error) {
      errorLog(`Queue worker ${worker.handler} failed; its messages stay in the queue`, error);
      failed = "all";
    }
    const done = failed === "all" ? [] : records.filter((record) => !failed.has(record.messageId));
    if (done.length === 0) return;
    const { Failed = [] } = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
      }),
    );
    if (Failed.length > 0)
      errorLog(`Could not delete ${Failed.length} processed message(s) of ${worker.handler}`);
  }

  const loops = Array.from({ length: worker.maxConcurrency }, async () => {
    while (!stopped) {
      try {
        await pollOnce();
      } catch (error) {
        if (stopped) break;
        errorLog(`Polling the queue of ${worker.handler} failed; trying again`, error);
        await new Promise((done) => setTimeout(done, RETRY_DELAY_MS));
      }
    }
  });

  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      sqs.destroy();
    },
  };
}

function reportedFailures(result: unknown, records: SQSRecord[]): Set<string> | "all" {
  const failures = (result as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return "all";
  const known = new Set(records.map((record) => record.messageId));
  const reported = new Set<string>();
  for (const failure of failures as unknown[]) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof identifier !== "string" || !known.has(identifier)) return "all";
    reported.add(identifier);
  }
  return reported;
}

/** A received message as Lambda hands it to the function. */
export function toLambdaRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes: {
      ...attributes,
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? "1",
      SentTimestamp: attributes.SentTimestamp ?? "",
      SenderId: attributes.SenderId ?? "",
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? "",
    },
    messageAttributes: toLambdaAttributes(message.MessageAttributes ?? {}),
    md5OfBody: message.MD5OfBody ?? "",
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

function toLambdaAttributes(attributes: Record<string, MessageAttributeValue>): SQSMessageAttributes {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? "String",
        ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
        ...(value.BinaryValue !== undefined
          ? { binaryValue: Buffer.from(value.BinaryValue).toString("base64") }
          : {}),
        stringListValues: value.StringListValues ?? [],
        binaryListValues: (value.BinaryListValues ?? []).map((item) => Buffer.from(item).toString("base64")),
      },
    ]),
  );
}
