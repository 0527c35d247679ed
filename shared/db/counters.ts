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
 * A transaction cannot touch an item twice, and two count changes of one entity may pick the same
 * shard: `transactWrite` moves such a change to another shard (`distinctCountShards`).
 */
export function countChange(scope: Scope, entity: ListedEntity, delta: number): TransactItem {
  if (!Number.isInteger(delta) || delta === 0) throw new RangeError("A count change is a non-zero integer");
  const shard = Math.floor(Math.random() * COUNTER_SHARDS);
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.counterShard(scope, entity, shard),
      UpdateExpression: COUNT_UPDATE,
      ExpressionAttributeNames: { "#n": "n", "#type": "type" },
      ExpressionAttributeValues: { ":delta": delta, ":type": "counter" },
    },
  };
}

const COUNT_UPDATE = "ADD #n :delta SET #type = :type";

/**
 * The items of a transaction with its count changes on distinct shards: a change aimed at a shard
 * another change of the transaction already uses moves to a free shard of the same counter (the
 * total is the same). Items keep their places, so a caller's indexes into the cancellation reasons
 * stay right.
 */
export function distinctCountShards(items: TransactItem[]): TransactItem[] {
  const used = new Set<string>();
  return items.map((item) => {
    const update = item.Update;
    if (update?.UpdateExpression !== COUNT_UPDATE || !update.Key) return item;
    const pk = String(update.Key.pk);
    const [entity] = String(update.Key.sk).split("#");
    let sk = String(update.Key.sk);
    if (used.has(`${pk}|${sk}`)) {
      const free = [...Array(COUNTER_SHARDS).keys()].find((shard) => !used.has(`${pk}|${entity}#${shard}`));
      if (free === undefined)
        throw new RangeError(`A transaction counts ${entity} more than ${COUNTER_SHARDS} times`);
      sk = `${entity}#${free}`;
    }
    used.add(`${pk}|${sk}`);
    return sk === update.Key.sk ? item : { Update: { ...update, Key: { ...update.Key, sk } } };
  });
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
