import type { _Record as StreamRecord } from "@aws-sdk/client-dynamodb-streams";
import { describe, expect, it } from "vitest";
import { matchesFilter, toLambdaRecord } from "../../lib/local/stream-poller.ts";
import { queues, streamConsumers } from "../../lib/topology.ts";
import { destinationsOf, parseDeliveryMessage } from "../../shared/webhooks/delivery.ts";
import {
  MAX_ATTEMPTS,
  MAX_RETRY_DELAY_SECONDS,
  RETRY_DELAYS_SECONDS,
  retryDelayAfter,
} from "../../shared/webhooks/schedule.ts";

describe("the retry schedule", () => {
  it("backs off exponentially from one minute, four times longer each time, capped under SQS's 12 hours", () => {
    expect(RETRY_DELAYS_SECONDS).toEqual([
      60, 240, 960, 3840, 15360, 42900, 42900, 42900, 42900, 42900, 42900,
    ]);
    expect(MAX_RETRY_DELAY_SECONDS).toBeLessThan(12 * 3600);
  });

  it("spans at least three days over 12 attempts, the delivery queue's maxReceiveCount", () => {
    const total = RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBe(277_860);
    expect(total).toBeGreaterThanOrEqual(3 * 24 * 3600);
    expect(MAX_ATTEMPTS).toBe(12);
    expect(queues.webhookDeliveries.maxReceiveCount).toBe(MAX_ATTEMPTS);
  });

  it("gives the delay after each failed attempt, and none after the last", () => {
    expect(retryDelayAfter(1)).toBe(60);
    expect(retryDelayAfter(2)).toBe(240);
    expect(retryDelayAfter(11)).toBe(42900);
    expect(retryDelayAfter(12)).toBeUndefined();
    expect(retryDelayAfter(40)).toBeUndefined();
    expect(() => retryDelayAfter(0)).toThrow(RangeError);
  });
});

describe("destinationsOf", () => {
  const invoiceEvent = { data: { invoice: { id: "iv_1", webhook_url: "https://shop.example/hooks/iv" } } };

  it("sends an invoice's event to the project's URL and to the invoice's own", () => {
    expect(destinationsOf(invoiceEvent, "https://shop.example/hooks")).toEqual([
      { destination: "project", url: "https://shop.example/hooks" },
      { destination: "invoice", url: "https://shop.example/hooks/iv" },
    ]);
  });

  it("sends to whichever of the two is set, to the same URL once, and nowhere without either", () => {
    expect(destinationsOf(invoiceEvent, null)).toEqual([
      { destination: "invoice", url: "https://shop.example/hooks/iv" },
    ]);
    expect(destinationsOf(invoiceEvent, "https://shop.example/hooks/iv")).toEqual([
      { destination: "project", url: "https://shop.example/hooks/iv" },
    ]);
    expect(destinationsOf({ data: { customer: { id: "cust_1" } } }, "https://a.example/")).toEqual([
      { destination: "project", url: "https://a.example/" },
    ]);
    expect(destinationsOf({ data: { invoice: { id: "iv_1", webhook_url: null } } }, undefined)).toEqual([]);
  });
});

describe("parseDeliveryMessage", () => {
  const message = {
    project_id: "test-proj_1",
    event_id: "ev_1",
    round: "initial",
    destination: "project",
    url: "http://127.0.0.1/",
  };

  it("reads a delivery message and refuses anything else", () => {
    expect(parseDeliveryMessage(JSON.stringify(message))).toEqual(message);
    for (const body of [
      "not json",
      "null",
      "[]",
      JSON.stringify({ ...message, destination: "elsewhere" }),
      JSON.stringify({ ...message, event_id: "" }),
      JSON.stringify({ ...message, url: 1 }),
    ]) {
      expect(parseDeliveryMessage(body), body).toBeUndefined();
    }
  });
});

describe("the fan-out's stream filter, as the local poller applies it", () => {
  const [fanOut] = streamConsumers;
  const record = (eventName: "INSERT" | "MODIFY" | "REMOVE", type: string): StreamRecord => ({
    eventID: "1",
    eventName,
    eventVersion: "1.1",
    eventSource: "aws:dynamodb",
    awsRegion: "ddblocal",
    dynamodb: {
      ApproximateCreationDateTime: new Date("2026-03-01T12:00:00.000Z"),
      Keys: { pk: { S: "test-proj_1#ev_1" }, sk: { S: "resource" } },
      NewImage: {
        pk: { S: "test-proj_1#ev_1" },
        sk: { S: "resource" },
        type: { S: type },
        data: {
          M: {
            blob: { B: new Uint8Array([1, 2, 3]) },
            n: { N: "1" },
            l: { L: [{ BOOL: true }, { NULL: true }] },
          },
        },
      },
      SequenceNumber: "000000000000000000042",
      SizeBytes: 100,
      StreamViewType: "NEW_AND_OLD_IMAGES",
    },
  });
  const matches = (eventName: "INSERT" | "MODIFY" | "REMOVE", type: string) =>
    matchesFilter(fanOut?.filter ?? {}, toLambdaRecord(record(eventName, type), "arn:stream"));

  it("lets inserted events and resends through, and nothing else", () => {
    expect(matches("INSERT", "event")).toBe(true);
    expect(matches("INSERT", "webhook_resend")).toBe(true);
    expect(matches("MODIFY", "event")).toBe(false);
    expect(matches("REMOVE", "event")).toBe(false);
    expect(matches("INSERT", "customer")).toBe(false);
    expect(matches("INSERT", "webhook_delivery")).toBe(false);
  });

  it("hands records over in Lambda's shape: epoch seconds, base64 binaries, the stream's ARN", () => {
    const converted = toLambdaRecord(record("INSERT", "event"), "arn:stream");
    expect(converted).toMatchObject({
      eventName: "INSERT",
      eventSource: "aws:dynamodb",
      eventSourceARN: "arn:stream",
      dynamodb: {
        ApproximateCreationDateTime: 1772366400,
        SequenceNumber: "000000000000000000042",
        StreamViewType: "NEW_AND_OLD_IMAGES",
        NewImage: {
          type: { S: "event" },
          data: { M: { blob: { B: "AQID" }, n: { N: "1" }, l: { L: [{ BOOL: true }, { NULL: true }] } } },
        },
      },
    });
  });
});
