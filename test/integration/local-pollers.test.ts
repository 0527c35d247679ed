import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBRecord, DynamoDBStreamEvent, SQSEvent } from "aws-lambda";
import { type FauxqsServer, startFauxqs } from "fauxqs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type QueuePoller, startQueuePoller } from "../../lib/local/queue-poller.ts";
import { type StreamPoller, startStreamPoller } from "../../lib/local/stream-poller.ts";
import { ensureTable } from "../../lib/local/table.ts";
import type { QueueWorkerDeclaration, StreamConsumerDeclaration } from "../../lib/topology.ts";
import { eventually } from "../support/webhooks.ts";

/**
 * The local stand-ins for Lambda's event source mappings keep Lambda's contract: what a handler
 * reports failed (or a handler that throws) comes back, what it did not is done with.
 */
describe.concurrent("the local queue poller", () => {
  let server: FauxqsServer;
  let sqs: SQSClient;
  beforeAll(async () => {
    server = await startFauxqs({ port: 0, logger: false });
    sqs = new SQSClient({ endpoint: server.address });
  });
  afterAll(async () => {
    sqs.destroy();
    await server.stop();
  });

  const worker: QueueWorkerDeclaration = {
    handler: "test/worker",
    queue: "webhookDeliveries",
    batchSize: 10,
    maxConcurrency: 1,
    timeoutSeconds: 5,
    table: [],
  };

  /** A queue hiding received messages for 1 s and dead-lettering them on their third receive. */
  async function queue(name: string) {
    const deadLetters = server.createQueue(`${name}-dlq`);
    const created = server.createQueue(name, {
      attributes: {
        VisibilityTimeout: "1",
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetters.queueArn, maxReceiveCount: 2 }),
      },
    });
    const url = `${server.address}/000000000000/${name}`;
    return { url, arn: created.queueArn };
  }

  async function send(url: string, bodies: string[]) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: bodies.map((body, index) => ({ Id: String(index), MessageBody: body })),
      }),
    );
  }

  function poll(
    target: { url: string; arn: string },
    invoke: (event: SQSEvent) => Promise<unknown>,
  ): QueuePoller {
    return startQueuePoller({
      sqsEndpoint: server.address,
      queueUrl: target.url,
      queueArn: target.arn,
      worker,
      invoke,
      errorLog: () => {},
    });
  }

  it("deletes what the worker did not report failed; the failed come back after their visibility, then dead-letter", async () => {
    const target = await queue("partial");
    const seen: { body: string; receiveCount: string }[] = [];
    const poller = poll(target, async (event) => {
      for (const record of event.Records) {
        expect(record).toMatchObject({ eventSource: "aws:sqs", eventSourceARN: target.arn });
        seen.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
      }
      const failed = event.Records.filter((record) => record.body === "fails");
      return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
    });
    try {
      await send(target.url, ["works", "fails"]);
      await eventually(
        async () => server.inspectQueue("partial-dlq")?.messages.ready.map((message) => message.body) ?? [],
        (bodies) => bodies.includes("fails"),
      );
      expect(seen).toEqual([
        { body: "works", receiveCount: "1" },
        { body: "fails", receiveCount: "1" },
        { body: "fails", receiveCount: "2" },
      ]);
      const left = server.inspectQueue("partial")?.messages;
      expect([...(left?.ready ?? []), ...(left?.inflight ?? [])]).toEqual([]);
    } finally {
      await poller.stop();
    }
  });

  it.each([
    ["throws", async () => Promise.reject(new Error("worker crashed"))],
    [
      "names a message that is not in the batch",
      async () => ({ batchItemFailures: [{ itemIdentifier: "nope" }] }),
    ],
  ])("fails the whole batch when the worker %s", async (_, outcome) => {
    const name = `whole-${Math.random().toString(36).slice(2, 8)}`;
    const target = await queue(name);
    const counts = new Map<string, number>();
    const poller = poll(target, async (event) => {
      for (const record of event.Records) counts.set(record.body, (counts.get(record.body) ?? 0) + 1);
      return outcome();
    });
    try {
      await send(target.url, ["a", "b"]);
      await eventually(
        async () => server.inspectQueue(`${name}-dlq`)?.messages.ready.length ?? 0,
        (count) => count === 2,
      );
      expect(Object.fromEntries(counts)).toEqual({ a: 2, b: 2 });
    } finally {
      await poller.stop();
    }
  });
});

describe("the local stream poller", () => {
  const tableName = `payment-api-test-stream-poller-${process.pid}`;
  let documents: DynamoDBDocumentClient;
  beforeAll(async () => {
    const client = new DynamoDBClient({ endpoint: inject("dynamodbEndpoint") });
    await ensureTable(client, tableName);
    documents = DynamoDBDocumentClient.from(client);
  });
  afterAll(() => {
    documents.destroy();
  });

  const consumer: StreamConsumerDeclaration = {
    handler: "test/consumer",
    filter: { eventName: ["INSERT"], dynamodb: { NewImage: { type: { S: ["event"] } } } },
    batchSize: 2,
    timeoutSeconds: 5,
    table: [],
    sendsTo: [],
  };

  const put = (id: string, type = "event") =>
    documents.send(
      new PutCommand({ TableName: tableName, Item: { pk: `poller#${id}`, sk: "resource", type, id } }),
    );

  function poll(
    invoke: (event: DynamoDBStreamEvent) => Promise<unknown>,
    checkpointFile?: string,
  ): StreamPoller {
    return startStreamPoller({
      dynamodbEndpoint: inject("dynamodbEndpoint"),
      tableName,
      consumer,
      invoke,
      idleDelayMs: 10,
      errorLog: () => {},
      ...(checkpointFile ? { checkpointFile } : {}),
    });
  }

  const idOf = (record: DynamoDBRecord) => record.dynamodb?.NewImage?.id?.S ?? "";

  it("hands matching records to the consumer in batches, reads failed ones again from the first failure, and resumes after a restart", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stream-poller-"));
    const checkpointFile = join(dir, "positions.json");
    const batches: string[][] = [];
    let failures = 0;
    const consume = async (event: DynamoDBStreamEvent) => {
      expect(event.Records.every((record) => record.eventSource === "aws:dynamodb")).toBe(true);
      batches.push(event.Records.map(idOf));
      // "b" fails twice: once reported as failed, once by throwing.
      const failing = event.Records.find((record) => idOf(record) === "b");
      if (failing && failures < 2) {
        failures += 1;
        if (failures === 2) throw new Error("consumer crashed");
        return { batchItemFailures: [{ itemIdentifier: failing.dynamodb?.SequenceNumber }] };
      }
      return { batchItemFailures: [] };
    };
    try {
      // Written before the poller starts, so that it reads them in one page (batches of 2).
      await put("a");
      await put("x", "customer");
      await put("b");
      await documents.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: "poller#a", sk: "resource" },
          UpdateExpression: "SET touched = :yes",
          ExpressionAttributeValues: { ":yes": true },
        }),
      );
      await put("c");
      let poller = poll(consume, checkpointFile);
      await eventually(
        async () => batches.length,
        (count) => count >= 3,
      );
      await poller.stop();
      // Only inserted events (no customer, no modification); reading starts again at "b" each time.
      expect(batches).toEqual([
        ["a", "b"],
        ["b", "c"],
        ["b", "c"],
      ]);

      batches.length = 0;
      await put("d");
      poller = poll(consume, checkpointFile);
      await eventually(
        async () => batches.flat(),
        (ids) => ids.includes("d"),
      );
      await poller.stop();
      expect(batches).toEqual([["d"]]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
