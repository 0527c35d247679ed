import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import { COUNTER_SHARDS, keys, type ListedEntity, type Scope } from "./keys.ts";
import type { TransactItem } from "./transactions.ts";

/**
 * `total_count` without a scan: every create and delete adds ±1 to a counter in the same
 * transaction. The counter is spread over a few shards so concurrent creates rarely touch the
 * same item; reading it is one query over the shards.
 *
 * A transaction may hold one count change per entity (two could pick the same shard, and a
 * transaction cannot touch an item twice): a write that creates several items of one entity
 * counts them with one change of `delta` items.
 */
export function countChange(scope: Scope, entity: ListedEntity, delta: number): TransactItem {
  if (!Number.isInteger(delta) || delta === 0) throw new RangeError("A count change is a non-zero integer");
  const shard = Math.floor(Math.random() * COUNTER_SHARDS);
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.counterShard(scope, entity, shard),
      UpdateExpression: "ADD #n :delta SET #type = :type",
      ExpressionAttributeNames: { "#n": "n", "#type": "type" },
      ExpressionAttributeValues: { ":delta": delta, ":type": "counter" },
    },
  };
}

export async function totalCount(scope: Scope, entity: ListedEntity): Promise<number> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :entity)",
      ExpressionAttributeValues: { ":pk": keys.counterPartition(scope), ":entity": `${entity}#` },
      ProjectionExpression: "n",
      ConsistentRead: true,
    }),
  );
  return Items.reduce((sum, item) => sum + Number(item.n ?? 0), 0);
}
