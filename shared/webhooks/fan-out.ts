import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { DynamoDBRecord } from "aws-lambda";
import { clock } from "../clock.ts";
import { eventFromItem, findEvent, isEventItem } from "../events/api-store.ts";
import type { EventRecord } from "../events/event.ts";
import { logger } from "../observability/logger.ts";
import {
  type Delivery,
  deliveryMessage,
  destinationsOf,
  INITIAL_ROUND,
  newDelivery,
  RESEND_TYPE,
  type Resend,
} from "./delivery.ts";
import { findWebhookUrl } from "./project-settings.ts";
import { enqueueDelivery } from "./queue.ts";
import { markEnqueued, recordDelivery } from "./store.ts";

/**
 * The stream consumer's work: an event (or a resend) committed to the table becomes one delivery
 * per destination, each recorded, then sent to the delivery queue.
 *
 * Nothing is lost and nothing is sent twice by a replay: the delivery's key is a function of the
 * event, the round and the destination, so a stream record seen again (Lambda retries the batch
 * after a crash or a failure) finds the delivery it recorded, and sends its message only if that
 * was not done yet (`enqueued_at` unset). A crash between the send and `enqueued_at` can send one
 * message twice; the worker then finds the delivery no longer pending and drops the second.
 */
export type WebhookUrlReader = (scope: string) => Promise<string | null | undefined>;

/** Reads each environment's webhook URL once per batch (a batch often holds many events of one). */
export function batchUrlReader(): WebhookUrlReader {
  const reads = new Map<string, Promise<string | null | undefined>>();
  return (scope) => {
    let read = reads.get(scope);
    if (!read) {
      read = findWebhookUrl(scope);
      read.catch(() => reads.delete(scope));
      reads.set(scope, read);
    }
    return read;
  };
}

export async function fanOutRecord(record: DynamoDBRecord, webhookUrl: WebhookUrlReader): Promise<void> {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== "INSERT" || !image) return;
  const item = unmarshall(image as unknown as Record<string, AttributeValue>);
  if (isEventItem(item)) {
    await fanOut(eventFromItem(item), INITIAL_ROUND, webhookUrl);
    return;
  }
  if (item.type === RESEND_TYPE) {
    const { pk, sk, type, ...resend } = item;
    const { project_id: scope, event_id: eventId, id } = resend as Resend;
    const event = await findEvent(scope, eventId);
    if (!event) {
      logger.error("Resend of an event that does not exist", { project_id: scope, event_id: eventId });
      return;
    }
    await fanOut(event, id, webhookUrl);
  }
}

async function fanOut(event: EventRecord, round: string, webhookUrl: WebhookUrlReader): Promise<void> {
  const now = clock.now();
  const targets = destinationsOf(event, await webhookUrl(event.project_id));
  await Promise.all(targets.map((target) => recordAndEnqueue(newDelivery(event, round, target, now))));
}

async function recordAndEnqueue(delivery: Delivery): Promise<void> {
  const recorded = await recordDelivery(delivery);
  const current = recorded === "created" ? delivery : recorded.existing;
  if (current.enqueued_at !== null || current.status !== "pending") return;
  await enqueueDelivery(deliveryMessage(current));
  await markEnqueued(current, clock.now());
}
