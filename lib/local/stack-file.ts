import { readFile } from "node:fs/promises";

/**
 * `DATA_DIR/local-stack.json` exists while a local stack runs, so tools (`npm run project`) can
 * find its table and DynamoDB. It is removed on a clean stop; `pid` tells a stale one apart.
 */
export const LOCAL_STACK_FILE = "local-stack.json";

export interface LocalStackFile {
  dynamodb_endpoint: string;
  table_name: string;
  api_url: string;
  /** The `npm start` process. */
  pid: number;
  /** DynamoDB Local's Java process, when the stack started it. */
  dynamodb_pid?: number;
}

export async function readLocalStackFile(file: string): Promise<LocalStackFile | undefined> {
  let parsed: Partial<LocalStackFile>;
  try {
    parsed = JSON.parse(await readFile(file, "utf8")) as Partial<LocalStackFile>;
  } catch {
    return undefined;
  }
  const complete =
    typeof parsed.dynamodb_endpoint === "string" &&
    typeof parsed.table_name === "string" &&
    typeof parsed.api_url === "string" &&
    typeof parsed.pid === "number";
  return complete ? (parsed as LocalStackFile) : undefined;
}

export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Points the AWS SDK and `shared/config.ts` at a local stack's table in DynamoDB Local. Call it
 * before anything imports `shared/config.ts`, which reads `TABLE_NAME` once.
 */
export function useLocalTable(tableName: string, dynamodbEndpoint: string): void {
  const env = process.env;
  env.TABLE_NAME = tableName;
  env.AWS_ENDPOINT_URL_DYNAMODB = dynamodbEndpoint;
  env.AWS_REGION ??= "us-east-1";
  // DynamoDB Local accepts any credentials, but the SDK wants some to sign with.
  env.AWS_ACCESS_KEY_ID ??= "local";
  env.AWS_SECRET_ACCESS_KEY ??= "local";
}
