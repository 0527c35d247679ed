import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ID_PREFIXES } from "../ids.ts";

/**
 * Private keys are 192 random bits, so a single SHA-256 is the right storage hash (a slow
 * password hash only helps low-entropy secrets). Comparison is constant-time.
 */
export function newPrivateKey(sandbox: boolean): string {
  return `key_${sandbox ? "sandbox" : "live"}_${randomBytes(24).toString("base64url")}`;
}

export function hashPrivateKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function privateKeyMatches(key: string, storedHash: string): boolean {
  const given = Buffer.from(hashPrivateKey(key), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/**
 * One of an environment's private keys (`shared/projects/api-keys.ts` manages them). An environment
 * starts with one (made with the project, its hash in `key_hash`) and may hold several; their
 * records live in the environment's own item (`api_keys`), so authentication still reads one item.
 */
export interface ApiKeyRecord {
  id: string;
  name: string | null;
  /** SHA-256 of the key; the key itself is shown once and never stored. */
  hash: string;
  /** The key's last four characters, so a person can tell keys apart (unknown for the starting key). */
  last4: string | null;
  created_at: string;
  /** A rolled key works until then. */
  expires_at: string | null;
  revoked_at: string | null;
}

export type ApiKeyStatus = "active" | "expiring" | "expired" | "revoked";

/** What `apiKeysOf` reads of an environment (`ProjectEnvironment`'s fields). */
export interface KeyedEnvironment {
  id: string;
  key_hash: string;
  created_at: string;
  api_keys?: ApiKeyRecord[];
}

/** The records of an environment's keys: its list, or until its first change the starting key alone. */
export function apiKeysOf(environment: KeyedEnvironment): ApiKeyRecord[] {
  if (environment.api_keys) return environment.api_keys;
  return [
    {
      id: startingKeyId(environment.id),
      name: null,
      hash: environment.key_hash,
      last4: null,
      created_at: environment.created_at,
      expires_at: null,
      revoked_at: null,
    },
  ];
}

/** The starting key is named by its environment's ULID: `apik_<ULID>`. */
function startingKeyId(environmentId: string): string {
  return `${ID_PREFIXES.apiKey}${environmentId.slice(environmentId.lastIndexOf("_") + 1)}`;
}

export function statusOf(key: ApiKeyRecord, now: Date): ApiKeyStatus {
  if (key.revoked_at) return "revoked";
  if (key.expires_at === null) return "active";
  return Date.parse(key.expires_at) > now.getTime() ? "expiring" : "expired";
}

/** Whether the key opens requests at `now`. */
export function keyOpens(key: ApiKeyRecord, now: Date): boolean {
  const status = statusOf(key, now);
  return status === "active" || status === "expiring";
}

/** The environment's key that `privateKey` is, if it opens requests now. */
export function matchingKey(
  environment: KeyedEnvironment,
  privateKey: string,
  now = new Date(),
): ApiKeyRecord | undefined {
  let found: ApiKeyRecord | undefined;
  // Every key is compared, so the time taken does not tell which one matched.
  for (const key of apiKeysOf(environment)) {
    if (privateKeyMatches(privateKey, key.hash) && keyOpens(key, now)) found = key;
  }
  return found;
}
