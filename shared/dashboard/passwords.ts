import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";
import { invalidField } from "../http/errors.ts";

/**
 * Dashboard passwords, hashed with scrypt (memory-hard: 2^15 × 8 × 128 bytes = 32 MiB per hash),
 * a 16-byte salt per password, the parameters stored with the hash so they can grow later:
 * `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url). Compared in constant time.
 */
const PARAMETERS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

function derive(password: string, salt: Buffer, parameters: { N: number; r: number; p: number }) {
  const options: ScryptOptions = { ...parameters, maxmem: 128 * parameters.N * parameters.r * 2 };
  return new Promise<Buffer>((done, fail) =>
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (error, key) =>
      error ? fail(error) : done(key),
    ),
  );
}

/** Throws the 400 naming `password` when it is too short or too long. */
export function checkPassword(password: unknown): string {
  if (typeof password !== "string" || password.length < PASSWORD_MIN_LENGTH) {
    throw invalidField("password", `must be at least ${PASSWORD_MIN_LENGTH} characters`);
  }
  if (password.length > PASSWORD_MAX_LENGTH) {
    throw invalidField("password", `must be at most ${PASSWORD_MAX_LENGTH} characters`);
  }
  return password;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, PARAMETERS);
  const { N, r, p } = PARAMETERS;
  return ["scrypt", N, r, p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

/** A stored hash no password matches: what an unknown email is checked against, so both take as long. */
let decoy: Promise<string> | undefined;

/** Whether `password` is the one `stored` was made from (`stored` undefined: always false, in the same time). */
export async function passwordMatches(password: string, stored: string | undefined): Promise<boolean> {
  decoy ??= hashPassword(randomBytes(18).toString("base64url"));
  const [scheme, N, r, p, salt, hash] = (stored ?? (await decoy)).split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const given = await derive(password, Buffer.from(salt, "base64url"), {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return stored !== undefined && given.length === expected.length && timingSafeEqual(given, expected);
}
