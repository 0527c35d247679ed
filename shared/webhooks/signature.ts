import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Webhook signatures. Every delivery carries
 *
 *   Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * where `secret` is the environment's `webhook_signing_secret` (`GET /projects/{id}`), used as
 * UTF-8 bytes exactly as shown (prefix included), and the raw body is the request body as
 * received, byte for byte. A receiver recomputes the HMAC, compares it in constant time, and
 * refuses a timestamp too far from its clock (replays). Several `v1=` entries may appear (one
 * per valid secret, for a future rotation): any match is a match.
 */
export const SIGNATURE_HEADER = "Webhook-Signature";
export const SIGNATURE_SCHEME = "v1";
/** How far a signature's timestamp may be from the receiver's clock by default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = "whsec_";

/** A new signing secret: 256 random bits. */
export function newWebhookSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
}

function hmac(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(`${timestamp}.`, "utf8")
    .update(body, "utf8")
    .digest("hex");
}

/** The `Webhook-Signature` header value for `body` sent at `now`. */
export function signatureHeader(secret: string, body: string, now: Date): string {
  const timestamp = Math.floor(now.getTime() / 1000);
  return `t=${timestamp},${SIGNATURE_SCHEME}=${hmac(secret, timestamp, body)}`;
}

export type SignatureCheck =
  | { valid: true; timestamp: number }
  | { valid: false; reason: "malformed" | "mismatch" | "expired" };

/**
 * What a receiver does with a delivery, as a function: parses the header, recomputes the HMAC of
 * the raw body, compares in constant time and checks the timestamp is within `toleranceSeconds`.
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  rawBody: string,
  options: { now?: Date; toleranceSeconds?: number } = {},
): SignatureCheck {
  const parts = (header ?? "").split(",").map((part) => part.trim().split("="));
  const timestamps = parts.filter(([key]) => key === "t").map(([, value]) => value ?? "");
  const signatures = parts.filter(([key]) => key === SIGNATURE_SCHEME).map(([, value]) => value ?? "");
  const [timestampText] = timestamps;
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestampText ?? "") || signatures.length === 0) {
    return { valid: false, reason: "malformed" };
  }
  const timestamp = Number(timestampText);
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), "hex");
  const matches = signatures.some((signature) => {
    if (!/^[0-9a-f]{64}$/.test(signature)) return false;
    return timingSafeEqual(expected, Buffer.from(signature, "hex"));
  });
  if (!matches) return { valid: false, reason: "mismatch" };
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    return { valid: false, reason: "expired" };
  }
  return { valid: true, timestamp };
}
