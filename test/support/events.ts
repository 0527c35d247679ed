import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { TABLE } from "../../shared/db/table.ts";

/**
 * Every event an environment recorded, oldest first, read straight from the table (every page of
 * its event listing): what tests assert "an event is recorded iff the state changed" against.
 */
export async function recordedEvents(scope: string): Promise<Record<string, unknown>[]> {
  const index = TABLE.indexes.gsi1;
  const events: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": index.partitionKey },
        ExpressionAttributeValues: { ":pk": keys.listingPartition(scope, "event") },
        ExclusiveStartKey: start,
      }),
    );
    events.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return events;
}

/** The names of the events recorded about one transaction, sorted. */
export async function eventNamesOfTransaction(scope: string, transactionId: string): Promise<string[]> {
  return (await recordedEvents(scope))
    .filter((event) => (event.data as { transaction?: { id?: string } }).transaction?.id === transactionId)
    .map((event) => String(event.name))
    .sort();
}
