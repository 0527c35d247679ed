import { QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import { totalCount as totalCountOf } from "./counters.ts";
import { keys, type ListedEntity, type Scope } from "./keys.ts";
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
 * The listing index is eventually consistent, which is fine for listing; state changes never
 * read from it.
 */
export async function queryPage(
  scope: Scope,
  entity: ListedEntity,
  page: PageRequest,
): Promise<Page<Record<string, unknown>>> {
  const [totalCount, found] = await Promise.all([
    totalCountOf(scope, entity),
    queryIndexPage("gsi1", keys.listingPartition(scope, entity), page),
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
  const backward = page.endBefore !== undefined;
  const cursor = page.endBefore ?? page.startAfter;
  // Walk away from the cursor: forward in the requested order, or backward from `end_before`.
  const ascendingIds = (page.order === "asc") !== backward;
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

  const hasMore = items.length > page.limit;
  const pageItems = items.slice(0, page.limit);
  if (backward) pageItems.reverse();
  return { items: pageItems, hasMore };
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

/** Every item of one partition of an index, every page of it read in turn: for small partitions. */
export async function indexPartitionItems(
  indexName: IndexName,
  partition: string,
): Promise<Record<string, unknown>[]> {
  const index = TABLE.indexes[indexName];
  const items: Record<string, unknown>[] = [];
  let exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": index.partitionKey },
        ExpressionAttributeValues: { ":pk": partition },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    items.push(...(output.Items ?? []));
    exclusiveStartKey = output.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return items;
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
