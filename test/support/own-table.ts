/**
 * A table of the calling file's own, in the suite's DynamoDB Local: for a file whose work reads
 * every item of its table (a stream poller, a scan), which on the shared test table would also read
 * what every other file running beside it writes.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, inject } from "vitest";
import { ensureTable } from "../../lib/local/table.ts";

/**
 * Points `TABLE_NAME` at a table named after `name` and creates it before the file's tests. Call it
 * at the top of the file, before anything registers hooks that use the table: `shared/config.ts`
 * reads the variable lazily, so nothing has read it yet.
 */
export function useOwnTable(name: string): string {
  const tableName = `payment-api-test-${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${process.pid}`;
  const sharedTable = process.env.TABLE_NAME;
  process.env.TABLE_NAME = tableName;
  beforeAll(async () => {
    const client = new DynamoDBClient({ endpoint: inject("dynamodbEndpoint") });
    try {
      await ensureTable(client, tableName);
    } finally {
      client.destroy();
    }
  });
  afterAll(() => {
    process.env.TABLE_NAME = sharedTable;
  });
  return tableName;
}
