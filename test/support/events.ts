import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { TABLE } from "../../shared/db/table.ts";

/**
 * The names of the events an environment recorded about one transaction, sorted, read straight
 * from the table (every page of its event listing): what a test asserts "recorded iff the state
 * changed" against.
 */
export async function eventNamesOfTransaction(scope: string, transactionId: string): Promise<string[]> {
  const index = TABLE.indexes.gsi1;
  const names: string[] = [];
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
    for (const item of page.Items ?? []) {
      const data = item.data as { transaction?: { id?: string } };
      if (data.transaction?.id === transactionId) names.push(String(item.name));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return names.sort();
}
