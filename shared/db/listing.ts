import { QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import { totalCount } from "./counters.ts";
import { keys, type ListedEntity, type Scope } from "./keys.ts";
import { TABLE } from "./table.ts";

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
  const backward = page.endBefore !== undefined;
  const cursor = page.endBefore ?? page.startAfter;
  // Walk away from the cursor: forward in the requested order, or backward from `end_before`.
  const ascendingIds = (page.order === "asc") !== backward;
  const index = TABLE.indexes.gsi1;

  const items: Record<string, unknown>[] = [];
  let exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"];
  const [count] = await Promise.all([
    totalCount(scope, entity),
    (async () => {
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
            ExpressionAttributeValues: {
              ":pk": keys.listingPartition(scope, entity),
              ...(cursor ? { ":cursor": cursor } : {}),
            },
            ScanIndexForward: ascendingIds,
            Limit: page.limit + 1 - items.length,
            ExclusiveStartKey: exclusiveStartKey,
          }),
        );
        items.push(...(output.Items ?? []));
        exclusiveStartKey = output.LastEvaluatedKey;
      } while (exclusiveStartKey && items.length <= page.limit);
    })(),
  ]);

  const hasMore = items.length > page.limit;
  const pageItems = items.slice(0, page.limit);
  if (backward) pageItems.reverse();
  return { items: pageItems, hasMore, totalCount: count };
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
