import { BatchGetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import type { ItemKey } from "./keys.ts";

/** BatchGetItem reads at most this many keys per call. */
export const BATCH_GET_MAX_KEYS = 100;
const BATCH_ATTEMPTS = 8;

/** Which attributes to read, as names (the expression is built from them). */
export type Projection = readonly string[];

/**
 * Reads items by key in as few round trips as DynamoDB allows: 100 keys per call, and again for the
 * keys it left unprocessed under load (with a short, growing, jittered pause). Consistent reads;
 * duplicate keys are read once. Absent items are simply not in the answer.
 */
export async function batchGet(
  keys: readonly ItemKey[],
  projection?: Projection,
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  const unique = new Map(keys.map((key) => [`${key.pk}\u0000${key.sk}`, { pk: key.pk, sk: key.sk }]));
  let pending = [...unique.values()];
  const projected = projection && {
    ProjectionExpression: projection.map((_, i) => `#a${i}`).join(", "),
    ExpressionAttributeNames: Object.fromEntries(projection.map((name, i) => [`#a${i}`, name])),
  };
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= BATCH_ATTEMPTS) throw new Error(`DynamoDB left ${pending.length} items unread`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** attempt));
    const batch = pending.slice(0, BATCH_GET_MAX_KEYS);
    const output = await dynamo.send(
      new BatchGetCommand({
        RequestItems: { [config.tableName]: { Keys: batch, ConsistentRead: true, ...projected } },
      }),
    );
    found.push(...(output.Responses?.[config.tableName] ?? []));
    const unprocessed = (output.UnprocessedKeys?.[config.tableName]?.Keys ?? []) as ItemKey[];
    pending = [...unprocessed, ...pending.slice(BATCH_GET_MAX_KEYS)];
  }
  return found;
}
