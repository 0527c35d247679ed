import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { batchGet } from "../db/batch.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import {
  countIndexPartition,
  type Page,
  type PageRequest,
  queryIndexPage,
  queryPage,
} from "../db/listing.ts";
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

/**
 * A page of the events about one transaction or invoice (`keys.eventSubject`), through the third
 * access path (keys only): the page's event ids and their count together, then the events in one
 * batch read. Another environment's id finds nothing: its entries live under that environment.
 */
export async function listSubjectEvents(
  scope: Scope,
  subjectId: string,
  page: PageRequest,
): Promise<Page<EventRecord>> {
  const partition = keys.subjectEventsPartition(scope, subjectId);
  const [found, totalCount] = await Promise.all([
    queryIndexPage("gsi3", partition, page),
    countIndexPartition("gsi3", partition),
  ]);
  const ids = found.items.map((item) => String(item.gsi3sk));
  const items = await batchGet(ids.map((id) => keys.resource(scope, id)));
  const byId = new Map(items.filter(isEventItem).map((item) => [String(item.id), eventFromItem(item)]));
  return {
    items: ids.flatMap((id) => {
      const event = byId.get(id);
      return event ? [event] : [];
    }),
    hasMore: found.hasMore,
    totalCount,
  };
}
