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
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { TABLE } from "../shared/db/table.ts";

/** DynamoDB's throughput limit of one partition, in write units per second. */
export const PARTITION_WRITE_UNITS_PER_SECOND = 1000;

const MIDDLEWARE_NAME = "benchPartitionWrites";

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
      return next(args);
    },
    { step: "initialize", name: MIDDLEWARE_NAME },
  );

  return {
    stop() {
      dynamo.middlewareStack.remove(MIDDLEWARE_NAME);
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
