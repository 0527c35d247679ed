import {
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import {
  conditionFailedItem,
  failedConditions,
  type TransactItem,
  transactWrite,
} from "../db/transactions.ts";
import {
  ATTEMPT_TYPE,
  type Attempt,
  DELIVERY_TYPE,
  type Delivery,
  type DeliveryMessage,
  RESEND_TYPE,
  type Resend,
} from "./delivery.ts";

/** Table access for webhook deliveries, attempts and resends (all in their event's partition). */

const deliveryKey = (delivery: Pick<Delivery, "project_id" | "event_id" | "round" | "destination">) =>
  keys.webhookDelivery(delivery.project_id, delivery.event_id, delivery.round, delivery.destination);

function strip<T>(item: Record<string, unknown>): T {
  const { pk, sk, type, ...record } = item;
  return record as T;
}

/**
 * Records a delivery unless it exists: `created`, or the delivery found (a stream record seen
 * again finds the one it recorded the first time, with or without its message sent).
 */
export async function recordDelivery(delivery: Delivery): Promise<"created" | { existing: Delivery }> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: { ...deliveryKey(delivery), type: DELIVERY_TYPE, ...delivery },
        ConditionExpression: "attribute_not_exists(pk)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return "created";
  } catch (error) {
    const existing = conditionFailedItem(error);
    if (!existing) throw error;
    return { existing: strip<Delivery>(existing) };
  }
}

/** Notes that the delivery's queue message was sent (the first time only). */
export async function markEnqueued(delivery: Delivery, now: Date): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: deliveryKey(delivery),
      UpdateExpression: "SET #enqueued = if_not_exists(#enqueued, :now)",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: { "#enqueued": "enqueued_at" },
      ExpressionAttributeValues: { ":now": now.toISOString() },
    }),
  );
}

export async function findDelivery(message: DeliveryMessage): Promise<Delivery | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: deliveryKey(message), ConsistentRead: true }),
  );
  return Item?.type === DELIVERY_TYPE ? strip<Delivery>(Item) : undefined;
}

export type DeliveryChange =
  | { status: "delivered"; at: string }
  | { status: "failed"; at: string }
  | { status: "pending"; nextAttemptAt: string };

/**
 * Records an attempt and moves its delivery on, in one transaction, on the condition that the
 * delivery is still pending. When it is not (a duplicate message raced this one to the end), the
 * attempt, which did happen, is recorded alone. Returns whether the delivery was moved.
 */
export async function recordAttempt(attempt: Attempt, change: DeliveryChange): Promise<boolean> {
  const attemptPut = {
    TableName: config.tableName,
    Item: {
      ...keys.webhookAttempt(attempt.project_id, attempt.event_id, attempt.id),
      type: ATTEMPT_TYPE,
      ...attempt,
    },
    ConditionExpression: "attribute_not_exists(pk)",
  };
  const names: Record<string, string> = {
    "#status": "status",
    "#attempts": "attempts",
    "#last": "last_attempt_at",
    "#next": "next_attempt_at",
  };
  const values: Record<string, unknown> = {
    ":pending": "pending",
    ":one": 1,
    ":last": attempt.created_at,
    ":status": change.status,
  };
  const assignments = ["#status = :status", "#attempts = #attempts + :one", "#last = :last"];
  if (change.status === "pending") {
    values[":next"] = change.nextAttemptAt;
    assignments.push("#next = :next");
  } else {
    const field = change.status === "delivered" ? "delivered_at" : "failed_at";
    names["#at"] = field;
    values[":at"] = change.at;
    values[":none"] = null;
    assignments.push("#at = :at", "#next = :none");
  }
  try {
    await transactWrite([
      { Put: attemptPut },
      {
        Update: {
          TableName: config.tableName,
          Key: deliveryKey(attempt),
          UpdateExpression: `SET ${assignments.join(", ")}`,
          ConditionExpression: "#status = :pending",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
    ]);
    return true;
  } catch (error) {
    if (!failedConditions(error)?.includes(1)) throw error;
    await dynamo.send(new PutCommand(attemptPut));
    return false;
  }
}

export interface EventWebhookHistory {
  eventExists: boolean;
  deliveries: Delivery[];
  attempts: Attempt[];
}

/** An event's deliveries and attempts (attempts in time order), in one query of its partition. */
export async function readWebhookHistory(scope: Scope, eventId: string): Promise<EventWebhookHistory> {
  const history: EventWebhookHistory = { eventExists: false, deliveries: [], attempts: [] };
  let exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": keys.resource(scope, eventId).pk },
        ConsistentRead: true,
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const item of output.Items ?? []) {
      if (item.type === "event" && item.sk === keys.resource(scope, eventId).sk) history.eventExists = true;
      else if (item.type === DELIVERY_TYPE) history.deliveries.push(strip<Delivery>(item));
      else if (item.type === ATTEMPT_TYPE) history.attempts.push(strip<Attempt>(item));
    }
    exclusiveStartKey = output.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return history;
}

/**
 * Records a resend of an event that exists, with `alsoWrite` (the stored answer of an idempotent
 * request) in the same transaction; false when there is no such event.
 */
export async function insertResend(resend: Resend, alsoWrite: TransactItem[] = []): Promise<boolean> {
  try {
    await transactWrite([
      {
        ConditionCheck: {
          TableName: config.tableName,
          Key: keys.resource(resend.project_id, resend.event_id),
          ConditionExpression: "#type = :event",
          ExpressionAttributeNames: { "#type": "type" },
          ExpressionAttributeValues: { ":event": "event" },
        },
      },
      {
        Put: {
          TableName: config.tableName,
          Item: {
            ...keys.webhookResend(resend.project_id, resend.event_id, resend.id),
            type: RESEND_TYPE,
            ...resend,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      ...alsoWrite,
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return false;
    throw error;
  }
}
