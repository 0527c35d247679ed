import {
  GetCommand,
  ScanCommand,
  type ScanCommandOutput,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import { keys, type ListedEntity, SHARDS } from "./keys.ts";

/**
 * The one-time move of items written before the listing index and the counts were sharded
 * (`SHARDS` in `keys.ts`) to their shards (`bin/migrate-shards.ts` runs it on a stage):
 * - a listed item of a sharded entity still in its entity's one listing partition
 *   (`gsi1pk = {scope}#{entity}`) gets its shard's key, by a conditional update of its `gsi1pk`
 *   alone (nothing else of the item changes; a write of the API since then already put it there);
 * - a shard of a count of before (`pk = {scope}#counter`, `sk = {entity}#{shard}`) is added to the
 *   shard of the new layout with the same number and deleted, in one transaction conditioned on the
 *   value read, so no count is moved twice or lost (a change that came between is read again).
 * Every step is conditional on the layout of before: running it again moves only what is left
 * (idempotent), and it may stop anywhere. It scans the table once (in `segments` parallel parts),
 * reading keys only, and reports after each page where each part is (`progress`), so a run can
 * resume from there (`resumeFrom`). The API reads both layouts meanwhile (`LEGACY_LAYOUT`).
 */
export interface MigrationOptions {
  /** Parallel scan segments (DynamoDB's `TotalSegments`). Default 4. */
  segments?: number;
  /** Where each segment stopped in an earlier run (`progress`'s last report); `null` = done. */
  resumeFrom?: SegmentPositions;
  /** Called after each page of the scan with where every segment is. */
  progress?: (positions: SegmentPositions, tally: MigrationTally) => void | Promise<void>;
  /** Stops after this many pages of the scan in all (for tests of resuming). */
  maxPages?: number;
  /** Items a page of the scan reads at most (DynamoDB's `Limit`); default: 1 MB's worth. */
  pageSize?: number;
}

/** Per segment: the key to resume from, `null` when done, absent when not started. */
export type SegmentPositions = Record<number, Record<string, unknown> | null>;

export interface MigrationTally {
  /** Items read by the scan. */
  scanned: number;
  /** Listed items given their shard's key. */
  listingsMoved: number;
  /** Count items of before moved to a shard of the new layout. */
  countersMoved: number;
  /** Moves found done by someone else (a write of the API, another run) in the meantime. */
  skipped: number;
  /** Whether every segment reached the end of the table. */
  complete: boolean;
}

const COUNTER_MOVE_ATTEMPTS = 5;
/** Moves sent together per segment. */
const MOVES_IN_FLIGHT = 16;

export async function migrateToShards(options: MigrationOptions = {}): Promise<MigrationTally> {
  const segments = options.segments ?? 4;
  const positions: SegmentPositions = { ...(options.resumeFrom ?? {}) };
  const tally: MigrationTally = {
    scanned: 0,
    listingsMoved: 0,
    countersMoved: 0,
    skipped: 0,
    complete: false,
  };
  let pages = 0;
  const budgetLeft = () => options.maxPages === undefined || pages < options.maxPages;

  await Promise.all(
    Array.from({ length: segments }, async (_, segment) => {
      while (positions[segment] !== null && budgetLeft()) {
        pages += 1;
        const output: ScanCommandOutput = await dynamo.send(
          new ScanCommand({
            TableName: config.tableName,
            Segment: segment,
            TotalSegments: segments,
            ProjectionExpression: "pk, sk, gsi1pk, gsi1sk",
            // Listed items and counts only (the filter saves the transfer, not the read).
            FilterExpression: "attribute_exists(gsi1pk) OR #type = :counter",
            ExpressionAttributeNames: { "#type": "type" },
            ExpressionAttributeValues: { ":counter": "counter" },
            ExclusiveStartKey: positions[segment] ?? undefined,
            Limit: options.pageSize,
          }),
        );
        tally.scanned += output.ScannedCount ?? 0;
        const found = output.Items ?? [];
        for (let at = 0; at < found.length; at += MOVES_IN_FLIGHT) {
          await Promise.all(found.slice(at, at + MOVES_IN_FLIGHT).map((item) => migrateItem(item, tally)));
        }
        positions[segment] = output.LastEvaluatedKey ?? null;
        await options.progress?.({ ...positions }, { ...tally });
      }
    }),
  );
  tally.complete = Array.from({ length: segments }, (_, segment) => positions[segment]).every(
    (position) => position === null,
  );
  return tally;
}

/** What to do with one item the scan found (keys only): move its listing, or its count, or nothing. */
async function migrateItem(item: Record<string, unknown>, tally: MigrationTally): Promise<void> {
  const listing = legacyListing(item);
  if (listing) {
    const moved = await moveListing(item, listing.from, listing.to);
    if (moved) tally.listingsMoved += 1;
    else tally.skipped += 1;
    return;
  }
  const counter = legacyCounter(item);
  if (counter) {
    const moved = await moveCounter(counter);
    if (moved) tally.countersMoved += 1;
    else tally.skipped += 1;
  }
}

function isShardedEntity(entity: string): entity is ListedEntity {
  return Object.hasOwn(SHARDS, entity) && SHARDS[entity as ListedEntity].listing > 1;
}

/** A listed item still in its entity's one partition of before: where it is and where it goes. */
function legacyListing(item: Record<string, unknown>): { from: string; to: string } | undefined {
  if (typeof item.gsi1pk !== "string" || typeof item.gsi1sk !== "string") return undefined;
  const parts = item.gsi1pk.split("#");
  const [scope, entity] = parts;
  if (parts.length !== 2 || !scope || !entity || !isShardedEntity(entity)) return undefined;
  if (item.gsi1pk !== keys.legacyListingPartition(scope, entity)) return undefined;
  return { from: item.gsi1pk, to: keys.listing(scope, entity, item.gsi1sk).gsi1pk };
}

async function moveListing(item: Record<string, unknown>, from: string, to: string): Promise<boolean> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: "SET #gsi1pk = :to",
        ConditionExpression: "#gsi1pk = :from",
        ExpressionAttributeNames: { "#gsi1pk": "gsi1pk" },
        ExpressionAttributeValues: { ":from": from, ":to": to },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") return false;
    throw error;
  }
}

interface LegacyCounter {
  pk: string;
  sk: string;
  scope: string;
  entity: ListedEntity;
  shard: number;
}

/** A shard of a count of before: `pk = {scope}#counter`, `sk = {entity}#{shard}`. */
function legacyCounter(item: Record<string, unknown>): LegacyCounter | undefined {
  if (typeof item.pk !== "string" || typeof item.sk !== "string") return undefined;
  const [scope, kind, ...rest] = item.pk.split("#");
  if (!scope || kind !== "counter" || rest.length > 0) return undefined;
  if (item.pk !== keys.legacyCounterPartition(scope)) return undefined;
  const [entity, shard, ...more] = item.sk.split("#");
  if (!entity || !Object.hasOwn(SHARDS, entity) || more.length > 0 || !/^\d+$/.test(shard ?? ""))
    return undefined;
  return { pk: item.pk, sk: item.sk, scope, entity: entity as ListedEntity, shard: Number(shard) };
}

/** Adds a count of before to its shard of the new layout and deletes it, in one transaction. */
async function moveCounter(counter: LegacyCounter): Promise<boolean> {
  const target = keys.counterShard(
    counter.scope,
    counter.entity,
    counter.shard % SHARDS[counter.entity].counter,
  );
  for (let attempt = 0; attempt < COUNTER_MOVE_ATTEMPTS; attempt++) {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: config.tableName,
        Key: { pk: counter.pk, sk: counter.sk },
        ConsistentRead: true,
      }),
    );
    if (!Item) return false;
    const n = Number(Item.n ?? 0);
    const remove = {
      Delete: {
        TableName: config.tableName,
        Key: { pk: counter.pk, sk: counter.sk },
        ConditionExpression: Item.n === undefined ? "attribute_not_exists(#n)" : "#n = :n",
        ExpressionAttributeNames: { "#n": "n" },
        ...(Item.n === undefined ? {} : { ExpressionAttributeValues: { ":n": Item.n } }),
      },
    };
    const add = {
      Update: {
        TableName: config.tableName,
        Key: target,
        UpdateExpression: "ADD #n :n SET #type = :type",
        ExpressionAttributeNames: { "#n": "n", "#type": "type" },
        ExpressionAttributeValues: { ":n": n, ":type": "counter" },
      },
    };
    try {
      await dynamo.send(new TransactWriteCommand({ TransactItems: n === 0 ? [remove] : [remove, add] }));
      return true;
    } catch (error) {
      // The count changed since it was read (a container of before still running): read it again.
      const name = (error as Error).name;
      if (name !== "TransactionCanceledException" && name !== "ConditionalCheckFailedException") throw error;
    }
  }
  throw new Error(`The count ${counter.pk} ${counter.sk} kept changing: run the migration again`);
}
