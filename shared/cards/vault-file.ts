import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { MasterKey } from "./vault.ts";

/**
 * The vault's master key in the local stack and the tests: a JSON file holding a random 256-bit
 * master key (it wraps the data keys with AES-256-GCM, bound to the encryption context) and a
 * random 256-bit HMAC key (fingerprints). The file is created, readable by its owner only, the
 * first time it is needed; concurrent first uses (test workers) agree on one file.
 */
export interface KeyFile {
  version: 1;
  master_key: string;
  hmac_key: string;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function fileMasterKey(path: string): MasterKey {
  let keys: { master: KeyObject; hmac: KeyObject } | undefined;
  const load = () => {
    keys ??= loadOrCreate(path);
    return keys;
  };
  return {
    kind: "file",
    async newDataKey(context) {
      const plaintext = randomBytes(KEY_BYTES);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", load().master, iv);
      cipher.setAAD(context.bytes);
      const wrapped = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return { plaintext, wrapped: Buffer.concat([iv, cipher.getAuthTag(), wrapped]) };
    },
    async unwrap(wrapped, context) {
      const iv = wrapped.subarray(0, IV_BYTES);
      const tag = wrapped.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv("aes-256-gcm", load().master, iv);
      decipher.setAAD(context.bytes);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(wrapped.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    },
    async mac(message) {
      return createHmac("sha256", load().hmac).update(message).digest();
    },
  };
}

function loadOrCreate(path: string): { master: KeyObject; hmac: KeyObject } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    text = create(path);
  }
  return parse(path, text);
}

/**
 * Writes a new key file: first to a private temporary file, then linked into place, which fails
 * if another process got there first; that process's file is then the one used.
 */
function create(path: string): string {
  const file: KeyFile = {
    version: 1,
    master_key: randomBytes(KEY_BYTES).toString("base64"),
    hmac_key: randomBytes(KEY_BYTES).toString("base64"),
  };
  const text = `${JSON.stringify(file, null, 2)}\n`;
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temporary, path);
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readFileSync(path, "utf8");
  } finally {
    unlinkSync(temporary);
  }
}

function parse(path: string, text: string): { master: KeyObject; hmac: KeyObject } {
  let parsed: Partial<KeyFile> | undefined;
  try {
    parsed = JSON.parse(text) as Partial<KeyFile>;
  } catch {
    parsed = undefined;
  }
  const master = key(parsed?.master_key);
  const hmac = key(parsed?.hmac_key);
  if (parsed?.version !== 1 || !master || !hmac) {
    throw new Error(
      `${path} is not a card key file: expected {"version": 1, "master_key", "hmac_key"} with 32-byte base64 keys`,
    );
  }
  return { master: createSecretKey(master), hmac: createSecretKey(hmac) };
}

function key(value: unknown): Buffer | undefined {
  if (typeof value !== "string") return undefined;
  const bytes = Buffer.from(value, "base64");
  return bytes.length === KEY_BYTES ? bytes : undefined;
}
