import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { batchGet } from "./batch.ts";
import { dynamo } from "./client.ts";
import { type ItemKey, keys, LEGACY_LAYOUT, type ListedEntity, type Scope, SHARDS } from "./keys.ts";
import type { TransactItem } from "./transactions.ts";

/**
 * `total_count` without a scan: every create and delete adds ±1 to a counter in the same
 * transaction. The counter is spread over shards (`SHARDS`), each a partition key of its own, so
 * that a busy environment's count changes spread over as many partitions; reading it is one
 * BatchGetItem of the shards (with, until migrated, one query of the layout of before, sent together).
 *
 * A transaction cannot touch an item twice, and two count changes of one entity may pick the same
 * shard: `transactWrite` moves such a change to another shard (`distinctCountShards`).
 */
export function countChange(scope: Scope, entity: ListedEntity, delta: number): TransactItem {
  if (!Number.isInteger(delta) || delta === 0) throw new RangeError("A count change is a non-zero integer");
  const shard = Math.floor(Math.random() * SHARDS[entity].counter);
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
    // `{scope}#counter#{entity}#{shard}` (`keys.counterShard`): neither a scope nor an entity holds a `#`.
    const [scope = "", , entity] = String(update.Key.pk).split("#") as [Scope, string, ListedEntity];
    let key: ItemKey = { pk: String(update.Key.pk), sk: String(update.Key.sk) };
    if (used.has(key.pk)) {
      const shards = SHARDS[entity].counter;
      const free = [...Array(shards).keys()]
        .map((shard) => keys.counterShard(scope, entity, shard))
        .find((candidate) => !used.has(candidate.pk));
      if (free === undefined)
        throw new RangeError(`A transaction counts ${entity} more than ${shards} times`);
      key = free;
    }
    used.add(key.pk);
    return key.pk === update.Key.pk ? item : { Update: { ...update, Key: { ...update.Key, ...key } } };
  });
}

/**
 * The exact count of an environment's entity: the sum of its shards, read in one BatchGetItem
 * (consistent), and until migrated the shards of before (one query, sent with it).
 */
export async function totalCount(scope: Scope, entity: ListedEntity): Promise<number> {
  const shardKeys = Array.from({ length: SHARDS[entity].counter }, (_, shard) =>
    keys.counterShard(scope, entity, shard),
  );
  const [shards, legacy] = await Promise.all([
    batchGet(shardKeys, ["n"]),
    LEGACY_LAYOUT ? legacyCount(scope, entity) : 0,
  ]);
  return shards.reduce((sum, item) => sum + Number(item.n ?? 0), legacy);
}

/** The count of before the sharding: the `{entity}#{shard}` items of the environment's counter partition. */
export async function legacyCount(scope: Scope, entity: ListedEntity): Promise<number> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :entity)",
      ExpressionAttributeValues: { ":pk": keys.legacyCounterPartition(scope), ":entity": `${entity}#` },
      ProjectionExpression: "n",
      ConsistentRead: true,
    }),
  );
  return Items.reduce((sum, item) => sum + Number(item.n ?? 0), 0);
}
