import { activityWrite } from "../activities/activity.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { keys } from "../db/keys.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { AuthenticatedCaller } from "../http/auth.ts";
import { ApiError, busy, conflict, notFound } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { integerField, text } from "../validation/fields.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";
import { findEnvironment, type ProjectEnvironment, rememberEnvironment } from "./environment.ts";
import { keyUsesOf } from "./key-use.ts";
import { type ApiKeyRecord, apiKeysOf, hashPrivateKey, keyOpens, newPrivateKey, statusOf } from "./keys.ts";

/**
 * Managing an environment's private keys (`/api-keys`; what a key is and how one is checked is
 * `keys.ts`): a new key is created (shown once), one is rolled (a new key replaces it and the old one
 * works until the overlap ends), one is revoked. Each change rewrites the environment's list of keys
 * conditionally on the version of the list it read (`keys_version`), with its activity in the same
 * transaction.
 *
 * Other containers keep an environment for up to 30 seconds (`environment.ts`): a revoked key may
 * still open requests there for that long; a key they do not know yet is looked up again before a
 * request is refused (`shared/http/auth.ts`).
 */

/** Keys that open requests at once, and records kept in all (the oldest ended ones are dropped). */
export const MAX_ACTIVE_KEYS = 10;
const MAX_RECORDS = 25;
/** A rolled key's overlap: 24 hours unless asked, at most 7 days (0 ends it at once). */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;
const CHANGE_ATTEMPTS = 12;

/** What the API shows of a key: never its hash. */
export function presentApiKey(key: ApiKeyRecord, now = clock.now()) {
  return {
    id: key.id,
    name: key.name,
    last4: key.last4,
    status: statusOf(key, now),
    created_at: key.created_at,
    expires_at: key.expires_at,
    revoked_at: key.revoked_at,
  };
}

const keyName = text(80);
/** Whole seconds, at most 7 days. */
const overlapSeconds = z.pipe(
  integerField,
  z
    .number()
    .check(
      z.minimum(0, "must be 0 or more"),
      z.maximum(MAX_OVERLAP_SECONDS, `must be at most ${MAX_OVERLAP_SECONDS} (7 days)`),
    ),
);
export const apiKeyInput = z.object({ name: keyName });
export const apiKeyRollInput = z.object({ name: keyName, overlap_seconds: z.optional(overlapSeconds) });

/** `GET /api-keys`: newest first, every record kept, with when each was last used (read beside it). */
export async function listApiKeys(caller: AuthenticatedCaller) {
  const [environment, uses] = await Promise.all([
    freshEnvironment(caller.projectId),
    keyUsesOf(caller.projectId),
  ]);
  const now = clock.now();
  return [...apiKeysOf(environment)]
    .reverse()
    .map((key) => ({ ...presentApiKey(key, now), last_used_at: uses[key.id] ?? null }));
}

/** A change's answer: the key it is about, and a new key's secret (in this answer only). */
export interface KeyChange {
  api_key: ReturnType<typeof presentApiKey>;
  private_key?: string;
  /** The key a roll replaced, with the end of its overlap. */
  rolled_api_key?: ReturnType<typeof presentApiKey>;
}

/** `POST /api-keys`: a new key beside the others. */
export async function createApiKey(
  caller: AuthenticatedCaller,
  input: unknown,
  commitWith: (change: KeyChange) => TransactItem[],
): Promise<KeyChange> {
  const { name } = parseInput(apiKeyInput, input);
  return changeKeys(caller, commitWith, (list, now) => {
    const { record, privateKey } = newKey(caller.sandbox, name ?? null, now);
    return {
      list: [...list, record],
      subject: record,
      privateKey,
      activity: "api_key.created",
      title: `API key ${record.id} created`,
    };
  });
}

/** `POST /api-keys/{id}/roll`: a new key replaces this one, which works until the overlap ends. */
export async function rollApiKey(
  caller: AuthenticatedCaller,
  id: string,
  input: unknown,
  commitWith: (change: KeyChange) => TransactItem[],
): Promise<KeyChange> {
  const { name, overlap_seconds: overlap = DEFAULT_OVERLAP_SECONDS } = parseInput(apiKeyRollInput, input);
  return changeKeys(caller, commitWith, (list, now) => {
    const old = list.find((key) => key.id === id);
    if (!old) throw notFound("api-key", id);
    if (!keyOpens(old, now)) {
      throw conflict(
        "request.api-key.not-active",
        `The key ${id} is ${statusOf(old, now)}: only a key that opens requests can be rolled.`,
      );
    }
    const ends = new Date(now.getTime() + overlap * 1000).toISOString();
    // Rolling a key already rolled never lengthens its overlap.
    const expiresAt = old.expires_at && old.expires_at < ends ? old.expires_at : ends;
    const { record, privateKey } = newKey(caller.sandbox, name === undefined ? old.name : name, now);
    const rolled = { ...old, expires_at: expiresAt };
    return {
      list: [...list.map((key) => (key.id === id ? rolled : key)), record],
      subject: record,
      rolled,
      privateKey,
      activity: "api_key.rolled",
      title: `API key ${id} rolled to ${record.id}; the old key works until ${expiresAt}`,
    };
  });
}

/** `DELETE /api-keys/{id}`: the key opens nothing from now on; the last key that opens requests stays. */
export async function revokeApiKey(caller: AuthenticatedCaller, id: string): Promise<KeyChange> {
  return changeKeys(
    caller,
    () => [],
    (list, now) => {
      const key = list.find((record) => record.id === id);
      if (!key) throw notFound("api-key", id);
      // Revoked already: answered as it is, nothing written.
      if (key.revoked_at) return { subject: key };
      if (!list.some((other) => other.id !== id && keyOpens(other, now))) {
        throw conflict(
          "request.api-key.last",
          "This is the environment's only key that opens requests: create or roll one before revoking it.",
        );
      }
      const revoked = { ...key, revoked_at: now.toISOString() };
      return {
        list: list.map((other) => (other.id === id ? revoked : other)),
        subject: revoked,
        activity: "api_key.revoked",
        title: `API key ${id} revoked`,
      };
    },
  );
}

function newKey(sandbox: boolean, name: string | null, now: Date) {
  const privateKey = newPrivateKey(sandbox);
  const record: ApiKeyRecord = {
    id: newId("apiKey"),
    name,
    hash: hashPrivateKey(privateKey),
    last4: privateKey.slice(-4),
    created_at: now.toISOString(),
    expires_at: null,
    revoked_at: null,
  };
  return { record, privateKey };
}

/** What a change makes of the list: nothing to write without `list`. */
interface Change {
  list?: ApiKeyRecord[];
  subject: ApiKeyRecord;
  rolled?: ApiKeyRecord;
  privateKey?: string;
  activity?: "api_key.created" | "api_key.rolled" | "api_key.revoked";
  title?: string;
}

/**
 * Applies `change` to the environment's list of keys, conditionally on the list it read (a change
 * that raced another is made again on a fresh read), with its activity in the same transaction. The
 * answer stored for an `Idempotency-Key` (`commitWith`) never holds the new key: it is shown once.
 */
async function changeKeys(
  caller: AuthenticatedCaller,
  commitWith: (change: KeyChange) => TransactItem[],
  change: (list: ApiKeyRecord[], now: Date) => Change,
): Promise<KeyChange> {
  for (let attempt = 1; ; attempt++) {
    const environment = await freshEnvironment(caller.projectId);
    const now = clock.now();
    const version = environment.keys_version;
    const made = change(apiKeysOf(environment), now);
    const shown: KeyChange = {
      api_key: presentApiKey(made.subject, now),
      ...(made.rolled ? { rolled_api_key: presentApiKey(made.rolled, now) } : {}),
    };
    if (!made.list) return shown;
    if (made.privateKey && made.list.filter((key) => keyOpens(key, now)).length > MAX_ACTIVE_KEYS) {
      throw new ApiError(
        409,
        "request.api-key.too-many",
        `An environment has at most ${MAX_ACTIVE_KEYS} keys that open requests: revoke one first.`,
      );
    }
    const list = pruned(made.list, now);
    try {
      await transactWrite([
        {
          Update: {
            TableName: config.tableName,
            Key: keys.project(environment.id),
            UpdateExpression: "SET api_keys = :list, keys_version = :next",
            // Conditional on the version of the list it read.
            ConditionExpression:
              version === undefined
                ? "attribute_exists(pk) AND attribute_not_exists(keys_version) AND attribute_not_exists(deleted_at)"
                : "keys_version = :version AND attribute_not_exists(deleted_at)",
            ExpressionAttributeValues: {
              ":list": list,
              ":next": (version ?? 0) + 1,
              ...(version === undefined ? {} : { ":version": version }),
            },
          },
        },
        ...activityWrite(
          caller,
          made.activity ?? "api_key.created",
          made.title ?? "",
          { type: "api_key", id: made.subject.id },
          now,
        ),
        ...commitWith({ ...shown, ...(made.privateKey ? { private_key: null as unknown as string } : {}) }),
      ]);
    } catch (error) {
      if (!failedConditions(error)?.includes(0)) throw error;
      // Another change of the keys came first: made again on a fresh read, after a short random pause.
      if (attempt >= CHANGE_ATTEMPTS) {
        throw busy("request.api-key.busy", "The environment's keys are being changed: retry the request.");
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 5)));
      continue;
    }
    rememberEnvironment({ ...environment, api_keys: list, keys_version: (version ?? 0) + 1 });
    return { ...shown, ...(made.privateKey ? { private_key: made.privateKey } : {}) };
  }
}

/** Drops the oldest records of keys that open nothing any more, past `MAX_RECORDS`. */
function pruned(list: ApiKeyRecord[], now: Date): ApiKeyRecord[] {
  let excess = list.length - MAX_RECORDS;
  return list.filter((key) => {
    if (excess > 0 && !keyOpens(key, now)) {
      excess -= 1;
      return false;
    }
    return true;
  });
}

/** The environment as stored now (a change never starts from a container's cached copy). */
async function freshEnvironment(id: string): Promise<ProjectEnvironment> {
  const environment = await findEnvironment(id, { fresh: true });
  if (!environment) throw notFound("project", id);
  return environment;
}
