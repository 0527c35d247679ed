import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { ExportRecord } from "./export.ts";
import { EXPORT_DELIVERY_ITEM_TYPE } from "./names.ts";

/**
 * A request to deliver a completed export by SFTP: an item in the export's partition, written once
 * (a repeated daily run finds it). Its insertion in the table's stream queues the delivery
 * (`enqueue.ts` → the delivery queue → `functions/exports/deliver.ts`), so the function that runs
 * exports never loads the SSH client, and a crash between the request and the delivery loses nothing.
 */
const requestKey = (scope: Scope, exportId: string) =>
  keys.child(scope, exportId, EXPORT_DELIVERY_ITEM_TYPE, "sftp");

export async function requestDelivery(record: ExportRecord): Promise<"requested" | "already-requested"> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: {
          ...requestKey(record.project_id, record.id),
          type: EXPORT_DELIVERY_ITEM_TYPE,
          project_id: record.project_id,
          export_id: record.id,
          remote_path: record.file_name,
          created_at: clock.now().toISOString(),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    return "requested";
  } catch (error) {
    if (error instanceof Error && error.name === "ConditionalCheckFailedException")
      return "already-requested";
    throw error;
  }
}

/** The delivery requested for an export, if one was. */
export async function findDeliveryRequest(
  scope: Scope,
  exportId: string,
): Promise<{ exportId: string; remotePath: string } | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: requestKey(scope, exportId), ConsistentRead: true }),
  );
  return Item?.type === EXPORT_DELIVERY_ITEM_TYPE
    ? { exportId: String(Item.export_id), remotePath: String(Item.remote_path) }
    : undefined;
}
