import { createHash } from "node:crypto";
import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { conditionFailedItem, type TransactItem } from "../db/transactions.ts";
import { logger } from "../observability/logger.ts";
import type { CredentialKind } from "./auth.ts";
import { ApiError, conflict } from "./errors.ts";

/**
 * `Idempotency-Key` on POST, PUT and DELETE: the same key with the same parameters replays the first answer, the
 * same key with other parameters is refused, and a duplicate that arrives while the first is still
 * running gets a 409. Keys are kept 24 hours, per environment and credential kind (a browser's key
 * never answers, nor blocks, the merchant's server). A state-changing handler writes its answer in the
 * same transaction as the change (`completion`), so a change and its stored answer can never be
 * separated by a crash; other answers are stored right after the handler. A 5xx answer releases
 * the key so that the retry runs again.
 */
export const KEEP_KEYS_FOR_SECONDS = 24 * 60 * 60;
/** Longer than any function runs: past it a crashed holder's key can be taken over by a retry. */
export const LOCK_FOR_MS = 60_000;
export const MAX_KEY_LENGTH = 255;

export interface StoredResponse {
  statusCode: number;
  body: string;
}

/**
 * How a route takes its key: `lock` claims it before the handler runs (a duplicate waits with a 409
 * or replays), for routes whose work reaches beyond one write (a provider, a schedule);
 * `in-the-write` lets the route's one transaction claim it as it stores the answer, in the same
 * round trip, for routes whose whole change is that transaction (creates): a duplicate that raced
 * it finds the key taken there, writes nothing, and replays the answer.
 */
export type IdempotencyMode = "lock" | "in-the-write";

export interface IdempotencyHandle {
  readonly scope: string;
  readonly credential: CredentialKind;
  readonly key: string;
  readonly owner: string;
  readonly mode: IdempotencyMode;
  readonly fingerprint: string;
  /** Set once the answer was stored by the handler's own transaction. */
  committed: boolean;
  /** The write that stores `response` as this key's answer: put it in the state change's transaction. */
  completion(response: StoredResponse): TransactItem;
}

export type Acquired = { handle: IdempotencyHandle } | { replay: StoredResponse };

export function readIdempotencyKey(headers: Record<string, string | undefined>): string | undefined {
  const key = headers["idempotency-key"]?.trim();
  if (!key) return undefined; // one client library sends an empty header: empty means absent
  if (key.length > MAX_KEY_LENGTH) {
    throw new ApiError(
      400,
      "request.idempotency-key.invalid",
      `The Idempotency-Key header is at most ${MAX_KEY_LENGTH} characters.`,
    );
  }
  return key;
}

export function fingerprint(method: string, path: string, parameters: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${stableJson(parameters)}`)
    .digest("hex");
}

export async function acquire(
  scope: string,
  credential: CredentialKind,
  key: string,
  requestFingerprint: string,
  owner: string,
  now = Date.now(),
): Promise<Acquired> {
  const nowSeconds = Math.floor(now / 1000);
  try {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: {
          ...keys.idempotency(scope, credential, key),
          type: "idempotency",
          fingerprint: requestFingerprint,
          status: "in_progress",
          owner,
          locked_until: now + LOCK_FOR_MS,
          expires_at: nowSeconds + KEEP_KEYS_FOR_SECONDS,
        },
        ConditionExpression:
          "attribute_not_exists(pk) OR expires_at < :nowSeconds OR " +
          "(#status = :inProgress AND locked_until < :now AND fingerprint = :fingerprint)",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":nowSeconds": nowSeconds,
          ":now": now,
          ":inProgress": "in_progress",
          ":fingerprint": requestFingerprint,
        },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
  } catch (error) {
    const existing = conditionFailedItem(error);
    if (existing === null) throw error;
    if (existing?.fingerprint !== requestFingerprint) {
      throw new ApiError(
        400,
        "request.idempotency-key.invalid",
        "This Idempotency-Key was already used with different parameters.",
      );
    }
    if (existing.status === "completed") return { replay: existing.response as StoredResponse };
    throw conflict(
      "request.idempotency-key.concurrent",
      "A request with this Idempotency-Key is still being processed; retry later.",
    );
  }
  return {
    handle: newHandle({ scope, credential, key, owner, mode: "lock", fingerprint: requestFingerprint }),
  };
}

/**
 * The key of an `in-the-write` route: nothing is read or written before the handler; its
 * transaction claims the key (see `IdempotencyMode`).
 */
export function claimInTheWrite(
  scope: string,
  credential: CredentialKind,
  key: string,
  requestFingerprint: string,
  owner: string,
): IdempotencyHandle {
  return newHandle({ scope, credential, key, owner, mode: "in-the-write", fingerprint: requestFingerprint });
}

/**
 * What an `in-the-write` route's transaction found under its key when it could not claim it: the
 * first request's answer to replay, or the reason to refuse this one.
 */
export function answerForTakenKey(
  handle: IdempotencyHandle,
  existing: Record<string, unknown> | undefined,
): ApiError | { replay: StoredResponse } {
  if (existing && existing.fingerprint !== handle.fingerprint) {
    return new ApiError(
      400,
      "request.idempotency-key.invalid",
      "This Idempotency-Key was already used with different parameters.",
    );
  }
  if (existing?.status === "completed") return { replay: existing.response as StoredResponse };
  return conflict(
    "request.idempotency-key.concurrent",
    "A request with this Idempotency-Key is still being processed; retry later.",
  );
}

function newHandle(identity: Omit<IdempotencyHandle, "committed" | "completion">): IdempotencyHandle {
  const { scope, credential, key } = identity;
  return {
    ...identity,
    committed: false,
    completion: (response) =>
      identity.mode === "lock"
        ? {
            Update: {
              TableName: config.tableName,
              Key: keys.idempotency(scope, credential, key),
              ...completeExpression(identity.owner, response),
            },
          }
        : { Put: claimingPut(identity, response) },
  };
}

/** The write of an `in-the-write` key with its answer, on the condition that the key is free. */
function claimingPut(
  identity: Omit<IdempotencyHandle, "committed" | "completion">,
  response: StoredResponse,
) {
  const nowSeconds = Math.floor(Date.now() / 1000);
  return {
    TableName: config.tableName,
    Item: {
      ...keys.idempotency(identity.scope, identity.credential, identity.key),
      type: "idempotency",
      fingerprint: identity.fingerprint,
      status: "completed",
      owner: identity.owner,
      response,
      expires_at: nowSeconds + KEEP_KEYS_FOR_SECONDS,
    },
    ConditionExpression: "attribute_not_exists(pk) OR expires_at < :nowSeconds",
    ExpressionAttributeValues: { ":nowSeconds": nowSeconds },
    ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
  };
}

function completeExpression(owner: string, response: StoredResponse) {
  return {
    UpdateExpression: "SET #status = :completed, #response = :response REMOVE locked_until",
    ConditionExpression: "#owner = :owner AND #status = :inProgress",
    ExpressionAttributeNames: { "#status": "status", "#response": "response", "#owner": "owner" },
    ExpressionAttributeValues: {
      ":completed": "completed",
      ":response": response,
      ":owner": owner,
      ":inProgress": "in_progress",
    },
  };
}

/**
 * Stores an `in-the-write` route's answer that no transaction stored (a refusal): on the condition
 * that the key is free, else what took it (`answerForTakenKey`), so that a retried refusal replays
 * the first answer.
 */
export async function claimWithAnswer(
  handle: IdempotencyHandle,
  response: StoredResponse,
): Promise<ReturnType<typeof answerForTakenKey> | undefined> {
  try {
    await dynamo.send(new PutCommand(claimingPut(handle, response)));
    return undefined;
  } catch (error) {
    const existing = conditionFailedItem(error);
    if (existing === null) {
      logger.warn("Could not store the answer of an idempotent request", { error });
      return undefined;
    }
    return answerForTakenKey(handle, existing);
  }
}

export async function complete(handle: IdempotencyHandle, response: StoredResponse): Promise<void> {
  if (handle.mode === "in-the-write") {
    await claimWithAnswer(handle, response);
    return;
  }
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.idempotency(handle.scope, handle.credential, handle.key),
        ...completeExpression(handle.owner, response),
      }),
    );
  } catch (error) {
    // The answer already went out; a failure here only means a retry will run again.
    logger.warn("Could not store the answer of an idempotent request", { error });
  }
}

export async function release(handle: IdempotencyHandle): Promise<void> {
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: keys.idempotency(handle.scope, handle.credential, handle.key),
        ConditionExpression: "#owner = :owner AND #status = :inProgress",
        ExpressionAttributeNames: { "#owner": "owner", "#status": "status" },
        ExpressionAttributeValues: { ":owner": handle.owner, ":inProgress": "in_progress" },
      }),
    );
  } catch (error) {
    // The lock then simply expires after LOCK_FOR_MS.
    logger.warn("Could not release an idempotency key", { error });
  }
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
