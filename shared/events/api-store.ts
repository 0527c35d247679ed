import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import type { EventRecord } from "./event.ts";

/**
 * Reading events for the API and for webhook delivery (recording them is `event.ts`'s job, in the
 * transaction of each state change).
 */
const ENTITY = "event";

/** An event from its item (a table item or a stream image): key and bookkeeping attributes dropped. */
export function eventFromItem(item: Record<string, unknown>): EventRecord {
  const { pk, sk, gsi1pk, gsi1sk, type, ...event } = item;
  return event as unknown as EventRecord;
}

export function isEventItem(item: Record<string, unknown> | undefined): item is Record<string, unknown> {
  return item?.type === ENTITY;
}

export async function findEvent(scope: Scope, id: string): Promise<EventRecord | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return isEventItem(Item) ? eventFromItem(Item) : undefined;
}

export async function listEvents(scope: Scope, page: PageRequest): Promise<Page<EventRecord>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map(eventFromItem) };
}
