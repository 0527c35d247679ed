import { setTimeout as sleep } from "node:timers/promises";
import {
  type AttributeDefinition,
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  ResourceInUseException,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import { TABLE } from "../../shared/db/table.ts";

const ACTIVE_TIMEOUT_MS = 30_000;

/**
 * Creates the single table from its definition in `shared/db/table.ts`, the way the CDK stack
 * does (every index projects ALL, on-demand billing, a stream of new and old images, TTL), or
 * brings an existing one up to date with it: safe to call on every start.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  let table = await describe(client, tableName);
  if (!table) {
    try {
      await client.send(new CreateTableCommand(tableDefinition(tableName)));
    } catch (error) {
      // Another process (a second test worker) created it first: that is the same table.
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    table = await waitUntilActive(client, tableName);
  }

  // Data kept from an older definition: add the indexes declared since, one at a time as DynamoDB requires.
  const existing = new Set((table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of globalSecondaryIndexes()) {
    if (existing.has(index.IndexName)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributeDefinitions(),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
    table = await waitUntilActive(client, tableName);
  }
  if (!table.StreamSpecification?.StreamEnabled) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
      }),
    );
    await waitUntilActive(client, tableName);
  }

  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  if (status !== "ENABLED" && status !== "ENABLING") {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      }),
    );
  }
}

function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: attributeDefinitions(),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: "HASH" },
      { AttributeName: TABLE.sortKey, KeyType: "RANGE" },
    ],
    GlobalSecondaryIndexes: globalSecondaryIndexes(),
    StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
  };
}

function globalSecondaryIndexes(): GlobalSecondaryIndex[] {
  return Object.values(TABLE.indexes).map((index) => ({
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: "HASH" },
      { AttributeName: index.sortKey, KeyType: "RANGE" },
    ],
    Projection: { ProjectionType: index.projection },
  }));
}

/** Every key attribute of the table and its indexes; keys are strings throughout. */
function attributeDefinitions(): AttributeDefinition[] {
  const names = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const index of Object.values(TABLE.indexes)) {
    names.add(index.partitionKey);
    names.add(index.sortKey);
  }
  return [...names].map((name) => ({ AttributeName: name, AttributeType: "S" }));
}

async function describe(client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<TableDescription> {
  const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
  for (;;) {
    const table = await describe(client, tableName);
    const indexesActive = (table?.GlobalSecondaryIndexes ?? []).every(
      (index) => index.IndexStatus === "ACTIVE",
    );
    if (table?.TableStatus === "ACTIVE" && indexesActive) return table;
    if (Date.now() > deadline) {
      throw new Error(`Table ${tableName} is not ACTIVE after ${ACTIVE_TIMEOUT_MS / 1000} s.`);
    }
    await sleep(50);
  }
}
