import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { TestProject } from "vitest/node";
import { buildBrowserAssets } from "../../lib/browser-assets.ts";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../lib/local/dynamodb-local.ts";
import { ensureTable } from "../../lib/local/table.ts";

/**
 * Starts ONE DynamoDB Local (in memory) for the whole test run and creates the table in it.
 * Every test isolates its data by creating its own project (every key is scoped by project), so
 * all test files share this table.
 *
 * Workers are forked after this runs and inherit `process.env`, so code under test that reads
 * `TABLE_NAME` or the SDK's `AWS_ENDPOINT_URL_DYNAMODB` at import finds the test database. The
 * same values are also provided to tests: `inject("dynamodbEndpoint")`, `inject("tableName")`.
 */
export const TEST_TABLE_NAME = "payment-api-test";

declare module "vitest" {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    tableName: string;
  }
}

let dynamodb: DynamoDbLocal | undefined;
let tempDir: string | undefined;

export async function setup(project: TestProject) {
  dynamodb = await startDynamoDbLocal();
  const env = process.env;
  env.AWS_ENDPOINT_URL_DYNAMODB = dynamodb.endpoint;
  env.TABLE_NAME = TEST_TABLE_NAME;
  // Tests never talk to AWS: fixed region and dummy credentials, whatever the shell has.
  env.AWS_REGION = "us-east-1";
  env.AWS_ACCESS_KEY_ID = "test";
  env.AWS_SECRET_ACCESS_KEY = "test";
  delete env.AWS_SESSION_TOKEN;
  delete env.AWS_PROFILE;
  env.LOG_LEVEL ??= "WARN";
  // The business metrics' EMF lines (one per request) stay off the test output; a test that reads
  // them collects them (`sendMetricsTo`), as the local stack does.
  env.POWERTOOLS_METRICS_DISABLED ??= "true";
  // The card vault's local key file, created by the first worker that seals a card.
  tempDir = mkdtempSync(join(tmpdir(), "payment-api-test-"));
  env.CARD_KEY_FILE = join(tempDir, "card-keys.json");
  delete env.CARD_KEY_ID;
  // The scripts served to browsers, for the API served in the test processes.
  env.BROWSER_ASSETS_DIR = join(tempDir, "browser");
  await buildBrowserAssets(env.BROWSER_ASSETS_DIR);

  const client = new DynamoDBClient({ endpoint: dynamodb.endpoint });
  try {
    await ensureTable(client, TEST_TABLE_NAME);
  } finally {
    client.destroy();
  }

  project.provide("dynamodbEndpoint", dynamodb.endpoint);
  project.provide("tableName", TEST_TABLE_NAME);
}

export async function teardown() {
  await dynamodb?.stop();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
}
