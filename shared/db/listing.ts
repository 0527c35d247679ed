import { QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import { totalCount as totalCountOf } from "./counters.ts";
import { keys, LEGACY_LAYOUT, type ListedEntity, type Scope } from "./keys.ts";
import { type IndexName, TABLE } from "./table.ts";

export interface PageRequest {
  limit: number;
  order: "asc" | "desc";
  startAfter?: string;
  endBefore?: string;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  totalCount: number;
}

/**
 * One page of an environment's resources from the listing index, in id (= creation) order.
 * Cursors are ids and exclusive. `hasMore` tells whether items remain beyond the page in the
 * direction of travel: after it for `start_after` (or no cursor), before it for `end_before`.
 * An entity's listing is spread over partitions by id (`keys.listingPartitions`): each is queried
 * for a page, all together with the count, and the pages are merged by id. The listing index is
 * eventually consistent, which is fine for listing; state changes never read from it.
 */
export async function queryPage(
  scope: Scope,
  entity: ListedEntity,
  page: PageRequest,
): Promise<Page<Record<string, unknown>>> {
  const [totalCount, found] = await Promise.all([
    totalCountOf(scope, entity),
    queryIndexPages("gsi1", listingPartitionsRead(scope, entity), page),
  ]);
  return { ...found, totalCount };
}

/**
 * One page of one partition of an index whose sort key is an id, with the rules of `queryPage`
 * (cursors, order, `hasMore`); the total is the caller's to give.
 */
export async function queryIndexPage(
  indexName: IndexName,
  partition: string,
  page: PageRequest,
): Promise<Omit<Page<Record<string, unknown>>, "totalCount">> {
  return queryIndexPages(indexName, [partition], page);
}

/**
 * One page of the union of several partitions of an index whose sort key is an id (each id in one
 * of them), with the rules of `queryPage`: each partition is read for the page's `limit + 1` items
 * beyond the cursor, all at once, and the first `limit + 1` of their merge are the union's.
 */
export async function queryIndexPages(
  indexName: IndexName,
  partitions: readonly string[],
  page: PageRequest,
): Promise<Omit<Page<Record<string, unknown>>, "totalCount">> {
  const backward = page.endBefore !== undefined;
  // Walk away from the cursor: forward in the requested order, or backward from `end_before`.
  const ascendingIds = (page.order === "asc") !== backward;
  const sortKey = TABLE.indexes[indexName].sortKey;
  const found = await Promise.all(
    partitions.map((partition) => walkPartition(indexName, partition, page, ascendingIds)),
  );
  const items = found.length === 1 ? (found[0] ?? []) : merged(found.flat(), sortKey, ascendingIds);
  const hasMore = items.length > page.limit;
  const pageItems = items.slice(0, page.limit);
  if (backward) pageItems.reverse();
  return { items: pageItems, hasMore };
}

/**
 * Items in the order of their `sortKey` (ascending or not; ids are ASCII, so as DynamoDB orders
 * them), each key once: an item whose index key changed (moved to its shard by the migration) may
 * show in both partitions for a moment, the index being eventually consistent.
 */
function merged(items: Record<string, unknown>[], sortKey: string, ascending: boolean) {
  const sorted = items.sort((a, b) => compare(String(a[sortKey]), String(b[sortKey])) * (ascending ? 1 : -1));
  return sorted.filter((item, at) => at === 0 || sorted[at - 1]?.[sortKey] !== item[sortKey]);
}

const compare = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** One query of a partition from where the last one stopped: its items in order, and where it stopped. */
export type PartitionRead = (
  partition: string,
  exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"],
) => Promise<Pick<QueryCommandOutput, "Items" | "LastEvaluatedKey">>;

/**
 * Every item of several partitions (each read with `read`, which queries in ascending order of
 * `sortKey`), merged in that order and handed on one at a time: at most one query's answer per
 * partition is held, and a partition is read again only when its last answer is used up (those
 * used up together are read together). For partitions whose sort keys are ids.
 */
export async function* mergedPartitionItems(
  partitions: readonly string[],
  sortKey: string,
  read: PartitionRead,
): AsyncGenerator<Record<string, unknown>> {
  const cursors = partitions.map((partition) => ({
    partition,
    items: [] as Record<string, unknown>[],
    next: undefined as QueryCommandOutput["LastEvaluatedKey"],
    done: false,
  }));
  let last: string | undefined;
  for (;;) {
    const empty = cursors.filter((cursor) => cursor.items.length === 0 && !cursor.done);
    await Promise.all(
      empty.map(async (cursor) => {
        const output = await read(cursor.partition, cursor.next);
        cursor.items = [...(output.Items ?? [])];
        cursor.next = output.LastEvaluatedKey;
        cursor.done = cursor.next === undefined;
      }),
    );
    // A partition answered nothing (a filter dropped its page) but has more: read it again first.
    if (cursors.some((cursor) => cursor.items.length === 0 && !cursor.done)) continue;
    let first: (typeof cursors)[number] | undefined;
    for (const cursor of cursors) {
      const head = cursor.items[0];
      if (head && (!first || compare(String(head[sortKey]), String(first.items[0]?.[sortKey])) < 0))
        first = cursor;
    }
    if (!first) return;
    const item = first.items.shift() as Record<string, unknown>;
    const key = String(item[sortKey]);
    // Ids are unique: the same one in two partitions is one item, seen mid-move (see `merged`).
    if (key !== last || cursors.length === 1) yield item;
    last = key;
  }
}

/** Up to `limit + 1` items of one partition beyond the page's cursor, in the direction of the walk. */
async function walkPartition(
  indexName: IndexName,
  partition: string,
  page: PageRequest,
  ascendingIds: boolean,
): Promise<Record<string, unknown>[]> {
  const cursor = page.endBefore ?? page.startAfter;
  const index = TABLE.indexes[indexName];
  const items: Record<string, unknown>[] = [];
  let exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: `#pk = :pk${cursor ? ` AND #sk ${ascendingIds ? ">" : "<"} :cursor` : ""}`,
        ExpressionAttributeNames: {
          "#pk": index.partitionKey,
          ...(cursor ? { "#sk": index.sortKey } : {}),
        },
        ExpressionAttributeValues: { ":pk": partition, ...(cursor ? { ":cursor": cursor } : {}) },
        ScanIndexForward: ascendingIds,
        Limit: page.limit + 1 - items.length,
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    items.push(...(output.Items ?? []));
    exclusiveStartKey = output.LastEvaluatedKey;
  } while (exclusiveStartKey && items.length <= page.limit);
  return items;
}

/**
 * How many items one partition of an index holds, counted by DynamoDB (`Select: COUNT`): it reads
 * the partition, 1 MB per round trip, so it suits the partitions of a keys-only index (some ten
 * thousand items per round trip), not an environment's listing (its counters do that).
 */
export async function countIndexPartition(indexName: IndexName, partition: string): Promise<number> {
  const index = TABLE.indexes[indexName];
  let count = 0;
  let exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": index.partitionKey },
        ExpressionAttributeValues: { ":pk": partition },
        Select: "COUNT",
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    count += output.Count ?? 0;
    exclusiveStartKey = output.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return count;
}

/**
 * Every item of some partitions of an index (one, or the shards of a listing), every page of each
 * read in turn, in the order of the index's sort key: for small partitions.
 */
export async function indexPartitionItems(
  indexName: IndexName,
  partitions: string | readonly string[],
): Promise<Record<string, unknown>[]> {
  const index = TABLE.indexes[indexName];
  const items: Record<string, unknown>[] = [];
  const read: PartitionRead = (partition, exclusiveStartKey) =>
    dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": index.partitionKey },
        ExpressionAttributeValues: { ":pk": partition },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
  const all = typeof partitions === "string" ? [partitions] : partitions;
  for await (const item of mergedPartitionItems(all, index.sortKey, read)) items.push(item);
  return items;
}

/** Every partition an entity's listing is read from: its shards, and until migrated the one of before. */
export function listingPartitionsRead(scope: Scope, entity: ListedEntity): string[] {
  const partitions = keys.listingPartitions(scope, entity);
  const legacy = keys.legacyListingPartition(scope, entity);
  if (LEGACY_LAYOUT && !partitions.includes(legacy)) partitions.push(legacy);
  return partitions;
}

/**
 * The page `queryPage` would give, from a whole list already read: for the few items of one
 * partition (a customer's tokens), read in one query rather than through the listing index.
 */
export function pageOfList<T extends { id: string }>(items: readonly T[], page: PageRequest): Page<T> {
  const backward = page.endBefore !== undefined;
  const cursor = page.endBefore ?? page.startAfter;
  const ascendingIds = (page.order === "asc") !== backward;
  const ordered = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (!ascendingIds) ordered.reverse();
  const beyond =
    cursor === undefined
      ? ordered
      : ordered.filter((item) => (ascendingIds ? item.id > cursor : item.id < cursor));
  const pageItems = beyond.slice(0, page.limit);
  if (backward) pageItems.reverse();
  return { items: pageItems, hasMore: beyond.length > page.limit, totalCount: items.length };
}
