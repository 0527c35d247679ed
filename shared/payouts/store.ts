import { BatchWriteCommand, GetCommand, QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { type ItemKey, keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Payout, PayoutItem, Reconciliation } from "./payout.ts";
import { lineFromItem, type SettlementLine } from "./settlement.ts";

/**
 * Table access for payouts: one item per payout (`keys.resource`), listed and counted while it is
 * not deleted; its items in its own partition (`keys.payoutItem`), read a page at a time by id. A
 * payout is written once, on the condition that it does not exist (also as a deleted one), after
 * its items; every later change is conditional on the version read.
 */
const ENTITY = "payout";
const ITEM_ENTITY = "payout-item";
const ITEM_PREFIX = keys.childPrefix("payout-item");
/** BatchWriteItem writes at most this many items per call. */
const BATCH_WRITE_MAX = 25;
const BATCH_ATTEMPTS = 8;

export interface VersionedPayout {
  payout: Payout;
  version: number;
}

function fromItem(item: Record<string, unknown>): VersionedPayout {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...payout } = item;
  return { payout: payout as unknown as Payout, version: Number(version) };
}

function payoutItem(payout: Payout, version: number) {
  return {
    ...keys.resource(payout.project_id, payout.id),
    // A deleted payout leaves the listing (the index is sparse).
    ...(payout.deleted_at === null ? keys.listing(payout.project_id, ENTITY, payout.id) : {}),
    type: ENTITY,
    version,
    ...payout,
  };
}

/** An item's own `type` (sale, refund, …) is stored as `item_type`: `type` is the entity's. */
function itemOf({ type, ...item }: PayoutItem) {
  return {
    ...keys.payoutItem(item.project_id, item.payout_id, item.id),
    type: ITEM_ENTITY,
    item_type: type,
    ...item,
  };
}

function payoutItemFrom(stored: Record<string, unknown>): PayoutItem {
  const { pk, sk, type, item_type, ...item } = stored;
  return { ...item, type: item_type } as unknown as PayoutItem;
}

export async function findPayout(scope: Scope, id: string): Promise<VersionedPayout | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

export async function listPayouts(scope: Scope, page: PageRequest): Promise<Page<Payout>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).payout) };
}

/**
 * Writes a payout's items (idempotent: an item's id and content follow from what it pays out, so
 * writing it again writes the same), in batches, retrying what DynamoDB left unprocessed.
 */
export async function putPayoutItems(items: readonly PayoutItem[]): Promise<void> {
  await batchWrite(items.map((item) => ({ PutRequest: { Item: itemOf(item) } })));
}

type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: ItemKey } };

async function batchWrite(requests: WriteRequest[]): Promise<void> {
  for (let start = 0; start < requests.length; start += BATCH_WRITE_MAX) {
    let pending = requests.slice(start, start + BATCH_WRITE_MAX);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= BATCH_ATTEMPTS)
        throw new Error(`DynamoDB left ${pending.length} payout items unwritten`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** attempt));
      const output = await dynamo.send(
        new BatchWriteCommand({ RequestItems: { [config.tableName]: pending } }),
      );
      pending = (output.UnprocessedItems?.[config.tableName] ?? []) as WriteRequest[];
    }
  }
}

/**
 * Stores a new payout (its items written before), counted, with `alsoWrite` (its event): `exists`
 * when a payout of this id exists or existed (a close that ran before, or a deleted payout).
 */
export async function insertPayout(payout: Payout, alsoWrite: TransactItem[]): Promise<"created" | "exists"> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: payoutItem(payout, 1),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      countChange(payout.project_id, ENTITY, 1),
      ...alsoWrite,
    ]);
    return "created";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "exists";
    throw error;
  }
}

/** Records a new reconciliation on the payout read at `version`; `changed` when it moved meanwhile. */
export async function replaceReconciliation(
  current: VersionedPayout,
  reconciliation: Reconciliation,
): Promise<"replaced" | "changed"> {
  return replacePayout(current, { ...current.payout, reconciliation }, []);
}

/**
 * Marks the payout deleted (out of the listing and the count) with `alsoWrite`, on the version
 * read; its items are deleted after (`deletePayoutItems`).
 */
export async function markPayoutDeleted(
  current: VersionedPayout,
  at: string,
  alsoWrite: TransactItem[],
): Promise<"replaced" | "changed"> {
  return replacePayout(current, { ...current.payout, deleted_at: at }, [
    countChange(current.payout.project_id, ENTITY, -1),
    ...alsoWrite,
  ]);
}

async function replacePayout(
  current: VersionedPayout,
  next: Payout,
  alsoWrite: TransactItem[],
): Promise<"replaced" | "changed"> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: payoutItem(next, current.version + 1),
          ConditionExpression: "#version = :version",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":version": current.version },
        },
      },
      ...alsoWrite,
    ]);
    return "replaced";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "changed";
    throw error;
  }
}

/** Deletes every item of a payout (idempotent: what is already gone stays gone). */
export async function deletePayoutItems(scope: Scope, payoutId: string): Promise<void> {
  for (;;) {
    const { items } = await queryItems(scope, payoutId, {}, 1000, true);
    if (items.length === 0) return;
    await batchWrite(
      items.map((item) => ({ DeleteRequest: { Key: { pk: String(item.pk), sk: String(item.sk) } } })),
    );
  }
}

async function queryItems(
  scope: Scope,
  payoutId: string,
  range: { after?: string; before?: string; descending?: boolean },
  limit: number,
  keysOnly = false,
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const { pk } = keys.payoutItem(scope, payoutId, "");
  const lower = range.after !== undefined ? `${ITEM_PREFIX}${range.after}` : undefined;
  const upper = range.before !== undefined ? `${ITEM_PREFIX}${range.before}` : undefined;
  const items: Record<string, unknown>[] = [];
  let startKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: lower
          ? "pk = :pk AND sk > :lower"
          : upper
            ? "pk = :pk AND sk BETWEEN :prefix AND :upper"
            : "pk = :pk AND begins_with(sk, :prefix)",
        // `sk > lower` also passes keys beyond the items' prefix: kept out by the filter below.
        ExpressionAttributeValues: {
          ":pk": pk,
          ...(lower ? { ":lower": lower } : { ":prefix": ITEM_PREFIX }),
          ...(upper && !lower ? { ":upper": upper } : {}),
        },
        ...(keysOnly ? { ProjectionExpression: "pk, sk" } : {}),
        ScanIndexForward: !range.descending,
        Limit: limit + 1 - items.length,
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(
      ...(output.Items ?? []).filter(
        (item) => String(item.sk).startsWith(ITEM_PREFIX) && (upper === undefined || String(item.sk) < upper),
      ),
    );
    startKey = output.LastEvaluatedKey;
  } while (startKey && items.length <= limit);
  return { items: items.slice(0, limit), more: items.length > limit };
}

/** A page of a payout's items, by id, with the listing's rules (`queryIndexPage`). */
export async function pageOfPayoutItems(
  scope: Scope,
  payout: Payout,
  page: PageRequest,
): Promise<Page<PayoutItem>> {
  const backward = page.endBefore !== undefined;
  const cursor = page.endBefore ?? page.startAfter;
  const ascendingIds = (page.order === "asc") !== backward;
  const found = await queryItems(
    scope,
    payout.id,
    cursor === undefined
      ? { descending: !ascendingIds }
      : ascendingIds
        ? { after: cursor }
        : { before: cursor, descending: true },
    page.limit,
  );
  const items = found.items.map(payoutItemFrom);
  if (backward) items.reverse();
  return { items, hasMore: found.more, totalCount: payout.item_count };
}

/** Every item of a payout (a day's: what reconciliation reads). */
export async function allPayoutItems(scope: Scope, payoutId: string): Promise<PayoutItem[]> {
  const items: PayoutItem[] = [];
  let after: string | undefined;
  for (;;) {
    const found = await queryItems(scope, payoutId, after === undefined ? {} : { after }, 1000);
    items.push(...found.items.map(payoutItemFrom));
    if (!found.more) return items;
    after = items.at(-1)?.id;
  }
}

/**
 * Whether anything settled on an environment's business day: one key read at most in each of the
 * day's partitions (`keys.settlementDayPartitions`), all sent together.
 */
export async function dayHasLines(scope: Scope, day: string): Promise<boolean> {
  const counts = await Promise.all(
    keys.settlementDayPartitions(scope, day).map(async (partition) => {
      const { Count = 0 } = await dynamo.send(
        new QueryCommand({
          TableName: config.tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": partition },
          ProjectionExpression: "pk",
          Limit: 1,
        }),
      );
      return Count;
    }),
  );
  return counts.some((count) => count > 0);
}

/**
 * Every settlement line of an environment's business day: a query of each of its partitions, all
 * sent together (each paged by DynamoDB), in line order.
 */
export async function linesOfDay(scope: Scope, day: string): Promise<SettlementLine[]> {
  const partitions = await Promise.all(
    keys.settlementDayPartitions(scope, day).map(async (partition) => {
      const lines: SettlementLine[] = [];
      let startKey: QueryCommandOutput["LastEvaluatedKey"];
      do {
        const output = await dynamo.send(
          new QueryCommand({
            TableName: config.tableName,
            KeyConditionExpression: "pk = :pk",
            ExpressionAttributeValues: { ":pk": partition },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
        lines.push(...(output.Items ?? []).map(lineFromItem));
        startKey = output.LastEvaluatedKey;
      } while (startKey);
      return lines;
    }),
  );
  return partitions.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
