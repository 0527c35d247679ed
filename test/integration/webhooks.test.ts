import { ChangeMessageVisibilityCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import type { AttributeValue, DynamoDBStreamEvent } from "aws-lambda";
import { afterEach, describe, expect, it, vi } from "vitest";
import { handler as fanOut } from "../../functions/webhooks/fan-out.ts";
import { createLocalMetrics, seriesOf } from "../../lib/local/metrics.ts";
import { deadLetterName } from "../../lib/local/queues.ts";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { logger } from "../../shared/observability/logger.ts";
import { sendMetricsTo } from "../../shared/observability/metrics.ts";
import { createProject } from "../../shared/projects/project.ts";
import { sqs } from "../../shared/webhooks/queue.ts";
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from "../../shared/webhooks/schedule.ts";
import { verifySignature } from "../../shared/webhooks/signature.ts";
import { api, type Client } from "../e2e/harness.ts";
import { eventually, type Receiver, startReceiver, useWebhookStack } from "../support/webhooks.ts";

const stack = useWebhookStack("Webhooks");

const receivers: Receiver[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(name: string): Promise<Receiver> {
  const started = await startReceiver(name);
  receivers.push(started);
  return started;
}

interface Merchant {
  client: Client;
  projectId: string;
  secret: string;
}

/** A project of its own per test (its webhook URL is its own), in sandbox unless told otherwise. */
async function merchant(webhookUrl?: string, environment: "sandbox" | "live" = "sandbox"): Promise<Merchant> {
  const credentials = (await createProject("Webhook merchant"))[environment];
  const client = api(stack.api.url, credentials);
  const path = `/projects/${credentials.project_id}`;
  const { status, body } = webhookUrl
    ? await client.put(path, { webhook_url: webhookUrl })
    : await client.get(path);
  expect(status).toBe(200);
  return { client, projectId: credentials.project_id, secret: body.project.webhook_signing_secret };
}

/** Creates a customer (which records `customer.created`) and returns that event's id. */
async function customerCreatedEvent(client: Client): Promise<string> {
  const { status, body } = await client.post("/customers", { first_name: "Ada" });
  expect(status).toBe(200);
  const { body: events } = await client.get("/events?limit=100");
  const event = events.events.find(
    (candidate: { name: string; data: { customer?: { id: string } } }) =>
      candidate.name === "customer.created" && candidate.data.customer?.id === body.customer.id,
  );
  expect(event).toBeDefined();
  return event.id;
}

const history = async (client: Client, eventId: string) => {
  const { status, body } = await client.get(`/events/${eventId}/webhooks`);
  expect(status).toBe(200);
  return body as {
    webhooks: Record<string, unknown>[];
    deliveries: Record<string, unknown>[];
  };
};

/**
 * The history once the worker has recorded how each of `count` deliveries ended: a receiver
 * sees the request before the worker writes its outcome, so what it saw is not yet the record.
 */
const settledHistory = (client: Client, eventId: string, count = 1) =>
  eventually(
    () => history(client, eventId),
    ({ deliveries }) =>
      deliveries.length === count && deliveries.every((delivery) => delivery.status !== "pending"),
  );

const eventIdsOf = (target: Receiver) => target.requests.map((request) => JSON.parse(request.body).event_id);

/** Lets stray duplicates (the kind these tests rule out) arrive before counting. */
const settle = () => new Promise((done) => setTimeout(done, 300));

/**
 * Drives the backoff clock: every delay the worker asks SQS for (ChangeMessageVisibility) is
 * recorded, and the message is made visible again at once instead, so a schedule of days runs in
 * moments while the requested delays stay checkable.
 */
function warpRetryDelays(): number[] {
  const requested: number[] = [];
  const send = sqs.send.bind(sqs);
  vi.spyOn(sqs, "send").mockImplementation(((command: unknown) => {
    if (command instanceof ChangeMessageVisibilityCommand) {
      requested.push(command.input.VisibilityTimeout ?? -1);
      return send(new ChangeMessageVisibilityCommand({ ...command.input, VisibilityTimeout: 0 }));
    }
    return send(command as SendMessageCommand);
  }) as typeof sqs.send);
  return requested;
}

describe("webhook delivery", () => {
  it("delivers each event of a payment, once acknowledged, to the project's URL and to the invoice's own", async () => {
    const projectHooks = await receiver("project");
    const invoiceHooks = await receiver("invoice");
    const { client, secret } = await merchant(projectHooks.url);
    const card = await client.post("/cards", {
      number: "4242424242424242",
      exp_month: 12,
      exp_year: 2099,
      cvc2: "123",
    });
    expect(card.status).toBe(200);
    const invoice = await client.post("/invoices", {
      name: "Order 42",
      amount: "19.90",
      currency: "EUR",
      webhook_url: invoiceHooks.url,
    });
    expect(invoice.status).toBe(200);
    const capture = await client.post(`/invoices/${invoice.body.invoice.id}/capture`, {
      source: card.body.card.id,
    });
    expect(capture.status).toBe(200);

    const { body } = await client.get("/events?limit=100");
    const paymentEvents = (
      body.events as { id: string; name: string; data: { invoice?: { id: string } } }[]
    ).filter((event) => event.data.invoice?.id === invoice.body.invoice.id);
    expect(paymentEvents.map((event) => event.name)).toContain("invoice.completed");

    await projectHooks.waitFor(paymentEvents.length);
    await invoiceHooks.waitFor(paymentEvents.length);
    await settle();
    const expected = paymentEvents.map((event) => event.id).sort();
    expect(eventIdsOf(invoiceHooks).sort()).toEqual(expected);
    expect(
      eventIdsOf(projectHooks)
        .filter((id) => expected.includes(id))
        .sort(),
    ).toEqual(expected);

    for (const request of [...projectHooks.requests, ...invoiceHooks.requests]) {
      expect(request.method).toBe("POST");
      expect(request.headers["content-type"]).toBe("application/json");
      expect(
        verifySignature(secret, request.headers["webhook-signature"] as string, request.body).valid,
      ).toBe(true);
    }
    for (const event of paymentEvents) {
      const { webhooks, deliveries } = await settledHistory(client, event.id, 2);
      expect(deliveries.map((delivery) => [delivery.destination, delivery.status]).sort()).toEqual([
        ["invoice", "delivered"],
        ["project", "delivered"],
      ]);
      expect(
        webhooks.map((webhook) => [webhook.request_url, webhook.response_code, webhook.status]).sort(),
      ).toEqual(
        [
          [invoiceHooks.url, 200, "delivered"],
          [projectHooks.url, 200, "delivered"],
        ].sort(),
      );
    }
  });

  it("retries a receiver that fails its first attempts on the backoff schedule, and delivers when it recovers", async () => {
    const hooks = await receiver("recovering");
    hooks.respond = (previous) => (previous < 2 ? 500 : 200);
    const { client } = await merchant(hooks.url);
    const requested = warpRetryDelays();

    const eventId = await customerCreatedEvent(client);
    await hooks.waitFor(3);
    await settle();
    expect(eventIdsOf(hooks)).toEqual([eventId, eventId, eventId]);
    expect(requested).toEqual(RETRY_DELAYS_SECONDS.slice(0, 2));

    const { webhooks, deliveries } = await settledHistory(client, eventId);
    expect(webhooks.map((webhook) => [webhook.attempt, webhook.response_code, webhook.status])).toEqual([
      [1, 500, "failed"],
      [2, 500, "failed"],
      [3, 200, "delivered"],
    ]);
    // Each failed attempt says when the next one is due, by the schedule.
    const dueAfter = (webhook: Record<string, unknown>) =>
      (Date.parse(String(webhook.release_at)) - Date.parse(String(webhook.created_at))) / 1000;
    expect(dueAfter(webhooks[0] as Record<string, unknown>)).toBeGreaterThanOrEqual(60);
    expect(dueAfter(webhooks[0] as Record<string, unknown>)).toBeLessThan(65);
    expect(dueAfter(webhooks[1] as Record<string, unknown>)).toBeGreaterThanOrEqual(240);
    expect(webhooks[2]?.release_at).toBeNull();
    expect(deliveries).toEqual([
      expect.objectContaining({ destination: "project", status: "delivered", attempts: 3, failed_at: null }),
    ]);
  });

  it("gives up after the last attempt: the delivery is failed and its message is in the dead-letter queue, intact", async () => {
    const hooks = await receiver("broken");
    hooks.respond = () => 503;
    const { client, projectId } = await merchant(hooks.url);
    const requested = warpRetryDelays();
    // The delivery worker's metrics (the stage's series: this file's deliveries are one at a time).
    const metrics = createLocalMetrics();
    sendMetricsTo(metrics.collect);
    const sum = (metric: string) => seriesOf(metrics.series(), metric, { stage: "local" }).sum;

    const eventId = await customerCreatedEvent(client);
    await hooks.waitFor(MAX_ATTEMPTS, 20_000);
    const deadLetters = () =>
      stack.background.sqs
        .inspectQueue(deadLetterName(stack.background.queues.webhookDeliveries.declaration))
        ?.messages.ready.map((message) => message.body) ?? [];
    const [deadLetter] = await eventually(
      async () => deadLetters().filter((body) => body.includes(eventId)),
      (found) => found.length > 0,
    );
    expect(JSON.parse(deadLetter as string)).toEqual({
      project_id: projectId,
      event_id: eventId,
      round: "initial",
      destination: "project",
      url: hooks.url,
    });
    await settle();
    expect(hooks.requests).toHaveLength(MAX_ATTEMPTS);
    // Every delay of the schedule, then "visible now" so that the next receive dead-letters it.
    expect(requested).toEqual([...RETRY_DELAYS_SECONDS, 0]);

    const { webhooks, deliveries } = await settledHistory(client, eventId);
    expect(webhooks).toHaveLength(MAX_ATTEMPTS);
    expect(webhooks.every((webhook) => webhook.status === "failed" && webhook.response_code === 503)).toBe(
      true,
    );
    expect(webhooks.at(-1)?.release_at).toBeNull();
    expect(deliveries).toEqual([
      expect.objectContaining({ status: "failed", attempts: MAX_ATTEMPTS, failed_at: expect.any(String) }),
    ]);
    const queue = stack.background.sqs.inspectQueue(stack.background.queues.webhookDeliveries.declaration.id);
    const stillQueued = [
      ...(queue?.messages.ready ?? []),
      ...(queue?.messages.inflight.map((m) => m.message) ?? []),
    ];
    expect(stillQueued.filter((message) => message.body.includes(eventId))).toEqual([]);
    sendMetricsTo(undefined);
    expect([sum("WebhookFailures"), sum("WebhookDeadLetters"), sum("WebhookDeliveries")]).toEqual([
      MAX_ATTEMPTS - 1,
      1,
      0,
    ]);
  });

  it("delivers an event whose fan-out crashed between the commit and the enqueue (the stream is read again)", async () => {
    const hooks = await receiver("after-crash");
    const { client } = await merchant(hooks.url);
    const logged = vi.spyOn(logger, "error").mockImplementation(() => {});
    const errorsBefore = stack.errors.length;
    let crashes = 0;
    const send = sqs.send.bind(sqs);
    vi.spyOn(sqs, "send").mockImplementation(((command: unknown) => {
      if (command instanceof SendMessageCommand && crashes === 0) {
        crashes += 1;
        return Promise.reject(new Error("simulated crash: the process died before the message was sent"));
      }
      return send(command as SendMessageCommand);
    }) as typeof sqs.send);

    const eventId = await customerCreatedEvent(client);
    await hooks.waitFor(1);
    await settle();
    expect(crashes).toBe(1);
    expect(logged).toHaveBeenCalledWith(
      "Batch record failed",
      expect.objectContaining({ error: expect.any(Error) }),
    );
    expect(stack.errors.slice(errorsBefore)).toEqual([
      expect.stringMatching(/^Stream consumer webhooks\/fan-out failed records; reading again from \d+$/),
    ]);
    expect(eventIdsOf(hooks)).toEqual([eventId]);
    const { deliveries, webhooks } = await settledHistory(client, eventId);
    expect(deliveries).toEqual([expect.objectContaining({ status: "delivered", attempts: 1 })]);
    expect(webhooks).toHaveLength(1);
  });

  it("enqueues once for a stream record seen twice", async () => {
    const hooks = await receiver("replayed");
    const { client, projectId } = await merchant(hooks.url);
    const eventId = await customerCreatedEvent(client);
    await hooks.waitFor(1);

    const sent = vi.spyOn(sqs, "send");
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: config.tableName, Key: keys.resource(projectId, eventId) }),
    );
    const replay: DynamoDBStreamEvent = {
      Records: [
        {
          eventName: "INSERT",
          dynamodb: {
            SequenceNumber: "1",
            NewImage: marshall(Item ?? {}) as unknown as Record<string, AttributeValue>,
          },
        },
      ],
    };
    expect(await fanOut(replay)).toEqual({ batchItemFailures: [] });
    expect(await fanOut(replay)).toEqual({ batchItemFailures: [] });
    expect(sent).not.toHaveBeenCalled();
    await settle();
    expect(hooks.requests).toHaveLength(1);
  });

  it("delivers an event again when asked (POST /events/{id}/webhooks), as a new round", async () => {
    const hooks = await receiver("resend");
    const { client } = await merchant(hooks.url);
    const eventId = await customerCreatedEvent(client);
    await hooks.waitFor(1);

    const first = await client.post(`/events/${eventId}/webhooks`, {}, { idempotencyKey: "resend-1" });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      success: true,
      resend: {
        id: expect.stringMatching(/^whr_[0-9A-Z]{26}$/),
        event_id: eventId,
        requested_at: expect.any(String),
      },
    });
    const replayed = await client.post(`/events/${eventId}/webhooks`, {}, { idempotencyKey: "resend-1" });
    expect(replayed.body.resend.id).toBe(first.body.resend.id);

    await hooks.waitFor(2);
    await settle();
    expect(eventIdsOf(hooks)).toEqual([eventId, eventId]);
    const { deliveries } = await settledHistory(client, eventId, 2);
    expect(deliveries.map((delivery) => [delivery.round, delivery.status]).sort()).toEqual(
      [
        ["initial", "delivered"],
        [first.body.resend.id, "delivered"],
      ].sort(),
    );
  });

  it("sends a queue message that is not a delivery to the dead-letter queue at once, intact", async () => {
    const logged = vi.spyOn(logger, "error").mockImplementation(() => {});
    const requested = warpRetryDelays();
    const body = '{"not":"a delivery"}';
    await sqs.send(
      new SendMessageCommand({ QueueUrl: stack.background.queues.webhookDeliveries.url, MessageBody: body }),
    );
    await eventually(
      async () =>
        stack.background.sqs
          .inspectQueue(deadLetterName(stack.background.queues.webhookDeliveries.declaration))
          ?.messages.ready.map((message) => message.body) ?? [],
      (bodies) => bodies.includes(body),
    );
    // Made visible again at once on each of its receives, without any delay of the schedule.
    expect(requested).toEqual(Array.from({ length: MAX_ATTEMPTS }, () => 0));
    expect(logged).toHaveBeenCalledWith(
      "Not a webhook delivery message: left for the dead-letter queue",
      expect.objectContaining({ message_id: expect.any(String) }),
    );
  });

  it("refuses to resend an event that is not the caller's", async () => {
    const hooks = await receiver("not-mine");
    const owner = await merchant(hooks.url);
    const eventId = await customerCreatedEvent(owner.client);
    const other = await merchant();
    for (const path of [`/events/${eventId}/webhooks`, "/events/ev_01J00000000000000000000000/webhooks"]) {
      const { status, body } = await other.client.post(path, {});
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.event.not-found");
    }
  });

  it("refuses at send time, on every attempt, a live webhook URL that reaches a private address", async () => {
    const hooks = await receiver("live-private");
    const { client, projectId } = await merchant(undefined, "live");
    // Stored as if it had passed the check when set and its host had since moved (DNS rebinding).
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(projectId),
        UpdateExpression: "SET webhook_url = :url",
        ExpressionAttributeValues: { ":url": hooks.url.replace("http:", "https:") },
      }),
    );
    warpRetryDelays();
    const eventId = await customerCreatedEvent(client);
    const { webhooks, deliveries } = await eventually(
      () => history(client, eventId),
      (found) => found.deliveries[0]?.status === "failed",
      20_000,
    );
    expect(webhooks).toHaveLength(MAX_ATTEMPTS);
    for (const webhook of webhooks) {
      expect(webhook.response_code).toBeNull();
      expect(webhook.error).toMatch(
        /^refused: webhook URL must reach a public address: 127\.0\.0\.1 is 127\.0\.0\.1, a loopback address$/,
      );
    }
    expect(deliveries[0]?.attempts).toBe(MAX_ATTEMPTS);
    expect(hooks.requests).toEqual([]);
  });
});
