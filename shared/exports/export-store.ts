import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, transactWrite } from "../db/transactions.ts";
import type { ExportDelivery, ExportRecord } from "./export.ts";

/**
 * Table access for exports: one item per export (`keys.resource`), listed and counted. A run takes
 * an export by a conditional write (pending, failed, or running with its lease over), and records
 * its outcome on the condition that it still holds that lease: two runs never write one export.
 */
const ENTITY = "export";

import { EXPORT_ITEM_TYPE } from "./names.ts";

export { EXPORT_ITEM_TYPE };

function fromItem(item: Record<string, unknown>): ExportRecord {
  const { pk, sk, gsi1pk, gsi1sk, type: _itemType, entity_type, ...record } = item;
  return { ...(record as unknown as ExportRecord), type: entity_type as ExportRecord["type"] };
}

function item(record: ExportRecord) {
  const { type, ...rest } = record;
  return {
    ...keys.resource(record.project_id, record.id),
    ...keys.listing(record.project_id, ENTITY, record.id),
    type: EXPORT_ITEM_TYPE,
    entity_type: type,
    ...rest,
  };
}

/** Stores a new export; `exists` when one has its id already (a daily export made before). */
export async function insertExport(record: ExportRecord): Promise<"created" | "exists"> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: item(record),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      countChange(record.project_id, ENTITY, 1),
    ]);
    return "created";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "exists";
    throw error;
  }
}

export async function findExport(scope: Scope, id: string): Promise<ExportRecord | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === EXPORT_ITEM_TYPE ? fromItem(Item) : undefined;
}

export async function listExports(scope: Scope, page: PageRequest): Promise<Page<ExportRecord>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map(fromItem) };
}

function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

/**
 * Takes the export for a run until `leaseUntil`: when it is pending, failed, or running under a
 * lease that is over. Undefined when it is completed or another run holds it.
 */
export async function takeExport(
  scope: Scope,
  id: string,
  now: Date,
  leaseUntil: Date,
): Promise<ExportRecord | undefined> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.resource(scope, id),
        UpdateExpression: "SET #status = :running, #lease = :lease, #error = :null",
        ConditionExpression:
          "#type = :type AND (#status IN (:pending, :failed) OR (#status = :running AND #lease < :now))",
        ExpressionAttributeNames: {
          "#status": "status",
          "#lease": "lease_until",
          "#error": "error",
          "#type": "type",
        },
        ExpressionAttributeValues: {
          ":running": "running",
          ":pending": "pending",
          ":failed": "failed",
          ":lease": leaseUntil.toISOString(),
          ":now": now.toISOString(),
          ":null": null,
          ":type": EXPORT_ITEM_TYPE,
        },
        ReturnValues: "ALL_NEW",
      }),
    );
    return Attributes ? fromItem(Attributes) : undefined;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Records a run's outcome, if the run still holds the lease it took (`false` otherwise). */
export async function finishExport(
  held: ExportRecord,
  outcome:
    | { status: "completed"; rows: number; size: number; location: string; at: string }
    | { status: "failed"; error: string },
): Promise<boolean> {
  const values =
    outcome.status === "completed"
      ? { rows: outcome.rows, size: outcome.size, location: outcome.location, completed_at: outcome.at }
      : { error: outcome.error };
  const names = Object.keys(values);
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.resource(held.project_id, held.id),
        UpdateExpression: `SET #status = :status, #lease = :null, ${names.map((_name, index) => `#f${index} = :f${index}`).join(", ")}`,
        ConditionExpression: "#status = :running AND #lease = :held",
        ExpressionAttributeNames: {
          "#status": "status",
          "#lease": "lease_until",
          ...Object.fromEntries(names.map((name, index) => [`#f${index}`, name])),
        },
        ExpressionAttributeValues: {
          ":status": outcome.status,
          ":running": "running",
          ":held": held.lease_until,
          ":null": null,
          ...Object.fromEntries(Object.values(values).map((value, index) => [`:f${index}`, value])),
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Records the outcome of a completed export's delivery to the SFTP server. */
export async function recordDelivery(record: ExportRecord, delivery: ExportDelivery): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: keys.resource(record.project_id, record.id),
      UpdateExpression: "SET #delivery = :delivery",
      ConditionExpression: "#status = :completed",
      ExpressionAttributeNames: { "#delivery": "delivery", "#status": "status" },
      ExpressionAttributeValues: { ":delivery": delivery, ":completed": "completed" },
    }),
  );
}
