import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import { outsideRoundTrips } from "../db/round-trips.ts";
import { logger } from "../observability/logger.ts";

/**
 * When each private key was last used (`last_used_at` in `GET /api-keys`). A use is recorded at most
 * once per key per `KEY_USE_WINDOW_MS` in a container (the map below remembers when it last wrote),
 * in an item apart from the environment's (`keys.keyUse`), so a record never conflicts with the
 * keys' own changes. The write starts beside the request's work, and the HTTP core waits for it only
 * once the answer is ready (`keyUsesRecorded`), so it adds no wait to the request and a Lambda
 * container is never frozen with it in flight; a failure is logged, never answered (the next use
 * tries again). Each write is conditional on the time it holds being earlier, so a slow write never
 * moves it back. `last_used_at` tells unused keys from used ones, accurate to the window; it is not a
 * security record.
 */
export const KEY_USE_WINDOW_MS = 5 * 60_000;
/** Keys remembered per container before the map starts afresh (a few writes more, once). */
const REMEMBERED_KEYS = 10_000;
const lastRecorded = new Map<string, number>();

/** Records a use of the environment's key `keyId` now, unless this container did within the window. */
export function noteKeyUse(scope: Scope, keyId: string): void {
  const now = clock.now();
  const remembered = `${scope}/${keyId}`;
  const last = lastRecorded.get(remembered);
  if (last !== undefined && now.getTime() - last < KEY_USE_WINDOW_MS) return;
  if (lastRecorded.size >= REMEMBERED_KEYS) lastRecorded.clear();
  lastRecorded.set(remembered, now.getTime());
  const write = outsideRoundTrips(() => recordKeyUse(scope, keyId, now))
    .catch((error: unknown) => {
      if (lastRecorded.get(remembered) === now.getTime()) lastRecorded.delete(remembered);
      logger.warn("Recording an API key's use failed", { project_id: scope, api_key_id: keyId, error });
    })
    .finally(() => inFlight.delete(write));
  inFlight.add(write);
}

/** The key-use writes started and not yet settled (they never reject). */
const inFlight = new Set<Promise<void>>();

/** Settles once every key-use write started so far has: the HTTP core awaits it before answering. */
export async function keyUsesRecorded(): Promise<void> {
  if (inFlight.size > 0) await Promise.all(inFlight);
}

/** Sets the key's last use to `at`, unless a later one is recorded already. */
export async function recordKeyUse(scope: Scope, keyId: string, at: Date): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.keyUse(scope),
        UpdateExpression: "SET #key = :at, #type = :type",
        ConditionExpression: "attribute_not_exists(#key) OR #key < :at",
        ExpressionAttributeNames: { "#key": keyId, "#type": "type" },
        ExpressionAttributeValues: { ":at": at.toISOString(), ":type": "key-use" },
      }),
    );
  } catch (error) {
    // A later use is recorded already: nothing to do.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** When each of the environment's keys was last used, by key id (a key never used is absent). */
export async function keyUsesOf(scope: Scope): Promise<Record<string, string>> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.keyUse(scope), ConsistentRead: true }),
  );
  const uses: Record<string, string> = {};
  for (const [name, value] of Object.entries(Item ?? {})) {
    if (name !== "pk" && name !== "sk" && name !== "type" && typeof value === "string") uses[name] = value;
  }
  return uses;
}
