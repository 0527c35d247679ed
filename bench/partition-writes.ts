/**
 * Writes per DynamoDB partition key, counted by a middleware on the in-process document client
 * (`shared/db/client.ts`), to find a hot key under load: DynamoDB serves at most 1,000 write units
 * per second per partition, and one partition key lives in one partition (unless DynamoDB splits an
 * item collection by sort key when it runs hot), in the table and in each index alike.
 *
 * Counted: the Put, Update and Delete of PutItem, UpdateItem, DeleteItem, BatchWriteItem and
 * TransactWriteItems, under the item's `pk`; a Put also under the index partitions its item
 * carries (`gsi1pk`, …). Updates and deletes of indexed items also write to their index partitions,
 * which the request does not show: the index figures are a lower bound.
 *
 * Write units are a lower bound too: a Put costs its item's size in KB (JSON length, rounded up),
 * an Update or Delete 1, each doubled in a transaction in the table (not in its indexes); an index
 * that keeps keys only costs 1; a transaction's ConditionCheck is not counted.
 *
 * Reads are counted too (DynamoDB serves at most 3,000 read units per second per partition), from
 * what came back: GetItem and each key of a BatchGetItem or TransactGetItems its item's size in
 * 4 KB (rounded up), a Query the size of all its items together in 4 KB (rounded up, at least 1),
 * halved when eventually consistent (a lower bound: a projection reads the whole item all the same).
 *
 * `npx tsx bench/load.ts` runs the load (same `LOAD_*` settings)
 * and prints, after its own report, per kind of partition key the request rate of one project at
 * which its hottest key would reach either limit, against the target of 5,000 req/s
 * (`formatPartitionLimits`).
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { TABLE } from "../shared/db/table.ts";
import { formatTable } from "./stats.ts";

/** DynamoDB's throughput limit of one partition, in write units per second. */
export const PARTITION_WRITE_UNITS_PER_SECOND = 1000;
/** DynamoDB's throughput limit of one partition, in read units per second. */
export const PARTITION_READ_UNITS_PER_SECOND = 3000;
/** Issue 23: no partition key of one project may reach a limit below this many requests per second. */
export const TARGET_REQUESTS_PER_SECOND = 5000;

const MIDDLEWARE_NAME = "benchPartitionWrites";

/** Reads of one partition key while the counting ran. */
export interface PartitionReads {
  /** `table`, or the index (`gsi1`, …) this partition key is of. */
  where: string;
  partition: string;
  reads: number;
  /** Read units (lower bound, see above). */
  units: number;
  peakUnitsPerSecond: number;
}

/** The reads of the last counting stopped (`countPartitionWrites(…).stop()`), most read units first. */
let lastReads: PartitionReads[] = [];
export function lastPartitionReads(): PartitionReads[] {
  return lastReads;
}

export interface PartitionWrites {
  /** `table`, or the index (`gsi1`, …) this partition key is of. */
  where: string;
  partition: string;
  writes: number;
  /** Distinct sort keys written: one hot item, or many (DynamoDB may split those by sort key). */
  items: number;
  /** Write units (lower bound, see above). */
  units: number;
  /** The most write units in one wall-clock second. */
  peakUnitsPerSecond: number;
}

interface Tally extends Omit<PartitionWrites, "items"> {
  sortKeys: Set<string>;
  second: number;
  unitsThisSecond: number;
}

type Item = Record<string, unknown>;
interface QueryInput {
  IndexName?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
  ConsistentRead?: boolean;
}
interface WriteRequest {
  Put?: { Item?: Item };
  Update?: { Key?: Item };
  Delete?: { Key?: Item };
}

/** A key attribute as the document client takes it (a string), or already marshalled (`{S}`). */
function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && "S" in value) return String((value as { S: unknown }).S);
  return undefined;
}

/**
 * Starts counting writes on `dynamo`; `stop()` removes the middleware and returns every partition
 * written, most write units first.
 */
export function countPartitionWrites(dynamo: DynamoDBDocumentClient): { stop(): PartitionWrites[] } {
  const tallies = new Map<string, Tally>();

  const add = (where: string, partition: string | undefined, sortKey: string | undefined, units: number) => {
    if (partition === undefined) return;
    const id = `${where} ${partition}`;
    let tally = tallies.get(id);
    if (!tally) {
      tally = {
        where,
        partition,
        writes: 0,
        sortKeys: new Set(),
        units: 0,
        peakUnitsPerSecond: 0,
        second: 0,
        unitsThisSecond: 0,
      };
      tallies.set(id, tally);
    }
    tally.sortKeys.add(sortKey ?? "");
    const second = Math.floor(Date.now() / 1000);
    if (second !== tally.second) {
      tally.second = second;
      tally.unitsThisSecond = 0;
    }
    tally.writes += 1;
    tally.units += units;
    tally.unitsThisSecond += units;
    tally.peakUnitsPerSecond = Math.max(tally.peakUnitsPerSecond, tally.unitsThisSecond);
  };

  const readTallies = new Map<string, PartitionReads & { second: number; unitsThisSecond: number }>();
  const addRead = (where: string, partition: string | undefined, units: number) => {
    if (partition === undefined) return;
    const id = `${where} ${partition}`;
    let tally = readTallies.get(id);
    if (!tally) {
      tally = { where, partition, reads: 0, units: 0, peakUnitsPerSecond: 0, second: 0, unitsThisSecond: 0 };
      readTallies.set(id, tally);
    }
    const second = Math.floor(Date.now() / 1000);
    if (second !== tally.second) {
      tally.second = second;
      tally.unitsThisSecond = 0;
    }
    tally.reads += 1;
    tally.units += units;
    tally.unitsThisSecond += units;
    tally.peakUnitsPerSecond = Math.max(tally.peakUnitsPerSecond, tally.unitsThisSecond);
  };
  const size = (item: unknown) => JSON.stringify(item ?? {}).length;
  const readUnits = (bytes: number, consistent: boolean) =>
    Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
  /** The partition key value a Query's key condition names (`#pk = :pk`, or the attribute's name). */
  const queriedPartition = (input: QueryInput): string | undefined => {
    const partitionKey = input.IndexName
      ? Object.values(TABLE.indexes).find((index) => index.name === input.IndexName)?.partitionKey
      : TABLE.partitionKey;
    for (const [, name, value] of (input.KeyConditionExpression ?? "").matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
      const attribute = name?.startsWith("#") ? input.ExpressionAttributeNames?.[name] : name;
      if (attribute === partitionKey && value) return text(input.ExpressionAttributeValues?.[value]);
    }
    return undefined;
  };
  const read = (
    command: string | undefined,
    input: Record<string, unknown>,
    output: Record<string, unknown>,
  ) => {
    if (command === "Get") {
      const key = input.Key as Item | undefined;
      addRead("table", text(key?.pk), readUnits(size(output.Item), input.ConsistentRead === true));
    } else if (command === "Query") {
      const query = input as QueryInput;
      const items = (output.Items ?? []) as unknown[];
      const bytes = items.reduce<number>((sum, item) => sum + size(item), 0);
      addRead(
        query.IndexName ?? "table",
        queriedPartition(query),
        readUnits(bytes, query.ConsistentRead === true),
      );
    } else if (command === "BatchGet") {
      const requests = (input.RequestItems ?? {}) as Record<string, { ConsistentRead?: boolean }>;
      const responses = (output.Responses ?? {}) as Record<string, Item[]>;
      for (const [table, items] of Object.entries(responses)) {
        for (const item of items) {
          addRead("table", text(item.pk), readUnits(size(item), requests[table]?.ConsistentRead === true));
        }
      }
    } else if (command === "TransactGet") {
      for (const response of (output.Responses ?? []) as Array<{ Item?: Item }>) {
        if (response.Item) addRead("table", text(response.Item.pk), 2 * readUnits(size(response.Item), true));
      }
    }
  };

  const write = (request: WriteRequest, transactional: boolean) => {
    const factor = transactional ? 2 : 1;
    const item = request.Put?.Item;
    if (item) {
      const kilobytes = Math.max(1, Math.ceil(JSON.stringify(item).length / 1024));
      add("table", text(item.pk), text(item.sk), factor * kilobytes);
      for (const index of Object.values(TABLE.indexes)) {
        const units = index.projection === "ALL" ? kilobytes : 1;
        add(index.name, text(item[index.partitionKey]), text(item[index.sortKey]), units);
      }
    }
    const key = (request.Update ?? request.Delete)?.Key;
    add("table", text(key?.pk), text(key?.sk), factor);
  };

  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        Item?: Item;
        Key?: Item;
        TransactItems?: WriteRequest[];
        RequestItems?: Record<string, unknown>;
      };
      // The document client's commands run under the low-level command's name (`PutItemCommand`).
      const command = context.commandName?.replace(/(Item|Items)?Command$/, "");
      if (command === "Put") write({ Put: input }, false);
      else if (command === "Update") write({ Update: input }, false);
      else if (command === "Delete") write({ Delete: input }, false);
      else if (command === "TransactWrite") {
        for (const request of input.TransactItems ?? []) write(request, true);
      } else if (command === "BatchWrite") {
        for (const requests of Object.values(input.RequestItems ?? {}) as Array<
          Array<{ PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }>
        >) {
          for (const request of requests) {
            write({ Put: request.PutRequest, Delete: request.DeleteRequest }, false);
          }
        }
      }
      const result = await next(args);
      read(command, args.input as Record<string, unknown>, result.output as Record<string, unknown>);
      return result;
    },
    { step: "initialize", name: MIDDLEWARE_NAME },
  );

  return {
    stop() {
      dynamo.middlewareStack.remove(MIDDLEWARE_NAME);
      lastReads = [...readTallies.values()]
        .map(({ where, partition, reads, units, peakUnitsPerSecond }) => ({
          where,
          partition,
          reads,
          units,
          peakUnitsPerSecond,
        }))
        .sort((a, b) => b.units - a.units);
      return [...tallies.values()]
        .map(({ where, partition, writes, sortKeys, units, peakUnitsPerSecond }) => ({
          where,
          partition,
          writes,
          items: sortKeys.size,
          units,
          peakUnitsPerSecond,
        }))
        .sort((a, b) => b.units - a.units);
    },
  };
}

/**
 * A partition key with the project and ids as placeholders: what kind of partition it is (the
 * shards of one key, `…#3`, are one kind).
 */
export function partitionKind(partition: string): string {
  return partition
    .replace(/(test-)?proj_[0-9A-Z]{26}/g, "{project}")
    .replace(/([a-z]+_)[0-9A-Z]{26}/g, "$1{id}")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "{uuid}")
    .replace(/#[0-9a-f]{16,}$/, "#{hash}")
    .replace(/#\d+$/, "#{shard}");
}

export interface PartitionLimit {
  where: string;
  kind: string;
  keys: number;
  /** The hottest key of the kind: its write and read units per request of the mix. */
  writeUnitsPerRequest: number;
  readUnitsPerRequest: number;
  /** Requests per second of one project at which that key would average 1,000 WCU/s or 3,000 RCU/s. */
  limitAt: number;
  /** Which limit comes first. */
  limitedBy: "writes" | "reads";
  /** A partition of one resource (a card, a transaction), not of a whole project. */
  perResource: boolean;
}

/**
 * Per kind of partition key, from the writes and reads counted during a load of `requests`
 * requests: the request rate at which its hottest key would reach a partition's limit.
 */
export function partitionLimits(
  writes: readonly PartitionWrites[],
  reads: readonly PartitionReads[],
  requests: number,
): PartitionLimit[] {
  const kinds = new Map<
    string,
    { where: string; kind: string; keys: Set<string>; write: number; read: number }
  >();
  const group = (where: string, partition: string) => {
    const kind = partitionKind(partition);
    const id = `${where} ${kind}`;
    let found = kinds.get(id);
    if (!found) {
      found = { where, kind, keys: new Set(), write: 0, read: 0 };
      kinds.set(id, found);
    }
    found.keys.add(partition);
    return found;
  };
  // The hottest key of each kind, for writes and for reads.
  for (const row of writes) {
    const found = group(row.where, row.partition);
    found.write = Math.max(found.write, row.units);
  }
  for (const row of reads) {
    const found = group(row.where, row.partition);
    found.read = Math.max(found.read, row.units);
  }
  return [...kinds.values()]
    .map((found) => {
      const writeUnitsPerRequest = found.write / requests;
      const readUnitsPerRequest = found.read / requests;
      const byWrites =
        writeUnitsPerRequest > 0 ? PARTITION_WRITE_UNITS_PER_SECOND / writeUnitsPerRequest : Infinity;
      const byReads =
        readUnitsPerRequest > 0 ? PARTITION_READ_UNITS_PER_SECOND / readUnitsPerRequest : Infinity;
      return {
        where: found.where,
        kind: found.kind,
        keys: found.keys.size,
        writeUnitsPerRequest,
        readUnitsPerRequest,
        limitAt: Math.min(byWrites, byReads),
        limitedBy: byWrites <= byReads ? ("writes" as const) : ("reads" as const),
        perResource: /_\{id\}/.test(found.kind),
      };
    })
    .sort((a, b) => a.limitAt - b.limitAt);
}

/** The limits as text: every kind below the target flagged, then the first `top` others. */
export function formatPartitionLimits(
  writes: readonly PartitionWrites[],
  reads: readonly PartitionReads[],
  requests: number,
  top = 12,
): string {
  const limits = partitionLimits(writes, reads, requests);
  const below = limits.filter((row) => row.limitAt < TARGET_REQUESTS_PER_SECOND);
  const shown = [
    ...below,
    ...limits.filter((row) => row.limitAt >= TARGET_REQUESTS_PER_SECOND).slice(0, top),
  ];
  const thousands = (value: number) =>
    Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "none";
  const projectWide = below.filter((row) => !row.perResource);
  return [
    `Partition keys against the target (issue 23): no key of one project may reach ${PARTITION_WRITE_UNITS_PER_SECOND.toLocaleString("en-US")} WCU/s ` +
      `or ${PARTITION_READ_UNITS_PER_SECOND.toLocaleString("en-US")} RCU/s below ${TARGET_REQUESTS_PER_SECOND.toLocaleString("en-US")} req/s of this mix. ` +
      "Per kind of key, its hottest key's units per request and the req/s at which it would average the limit.",
    "",
    formatTable(
      [
        "where",
        "kind",
        "keys",
        "WCU/req",
        "RCU/req",
        "limit at req/s",
        "by",
        `vs ${TARGET_REQUESTS_PER_SECOND}`,
      ],
      shown.map((row) => [
        row.where,
        row.kind,
        String(row.keys),
        row.writeUnitsPerRequest.toFixed(3),
        row.readUnitsPerRequest.toFixed(3),
        thousands(row.limitAt),
        row.limitedBy,
        row.limitAt >= TARGET_REQUESTS_PER_SECOND
          ? "ok"
          : row.perResource
            ? "BELOW (one resource's key)"
            : "BELOW",
      ]),
    ),
    "",
    projectWide.length === 0
      ? `No key of the project below ${TARGET_REQUESTS_PER_SECOND.toLocaleString("en-US")} req/s.`
      : `${projectWide.length} kind(s) of key of the project below ${TARGET_REQUESTS_PER_SECOND.toLocaleString("en-US")} req/s: ${projectWide.map((row) => `${row.where} ${row.kind}`).join(", ")}.`,
    `All keys together, per request of this mix (lower bounds): writes ${totalsByPlace(writes, requests)}; reads ${totalsByPlace(reads, requests)}.`,
    ...(below.length > projectWide.length
      ? [
          'A key of one resource ("one resource\'s key") is hot when the load reuses that resource: the load bench pays every payment with one card.',
        ]
      : []),
  ].join("\n");
}

/** Units per request summed by where they land (`table 17.6 WCU, gsi1 4.3 WCU, …`). */
function totalsByPlace(rows: ReadonlyArray<{ where: string; units: number }>, requests: number): string {
  const sums = new Map<string, number>();
  for (const row of rows) sums.set(row.where, (sums.get(row.where) ?? 0) + row.units);
  return [...sums]
    .sort(([a], [b]) => (a === "table" ? -1 : b === "table" ? 1 : a < b ? -1 : 1))
    .map(([where, units]) => `${where} ${(units / requests).toFixed(2)}`)
    .join(", ");
}
