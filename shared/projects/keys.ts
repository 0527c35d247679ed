import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

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
