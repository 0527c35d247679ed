import { createHmac, timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  newWebhookSigningSecret,
  SIGNATURE_HEADER,
  signatureHeader,
  verifySignature,
} from "../../shared/webhooks/signature.ts";

/**
 * What a merchant's receiver does, written from the recipe in the README alone (no code of the
 * service): split the header, HMAC-SHA256 "<t>.<raw body>" with the secret, compare in constant time.
 */
function receiverAccepts(secret: string, header: string, rawBody: string, nowSeconds: number): boolean {
  const fields = new Map(header.split(",").map((part) => part.split("=") as [string, string]));
  const timestamp = fields.get("t");
  const signature = fields.get("v1");
  if (!timestamp || !signature) return false;
  const expected = createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest();
  const given = Buffer.from(signature, "hex");
  const matches = given.length === expected.length && timingSafeEqual(given, expected);
  return matches && Math.abs(nowSeconds - Number(timestamp)) <= 300;
}

describe("webhook signatures", () => {
  const secret = newWebhookSigningSecret();
  const body = JSON.stringify({ event_id: "ev_01J0000000000000000000000" });
  const sentAt = new Date("2026-03-01T12:00:00.000Z");
  const header = signatureHeader(secret, body, sentAt);

  it("is sent in the Webhook-Signature header as t=<unix seconds>,v1=<64 hex digits>", () => {
    expect(SIGNATURE_HEADER).toBe("Webhook-Signature");
    expect(header).toMatch(/^t=1772366400,v1=[0-9a-f]{64}$/);
  });

  it("matches what a receiver computes from the documented recipe", () => {
    expect(receiverAccepts(secret, header, body, 1772366400 + 10)).toBe(true);
  });

  it("does not match a tampered body, another secret or another timestamp", () => {
    const tampered = body.replace("ev_01J", "ev_01K");
    expect(receiverAccepts(secret, header, tampered, 1772366400)).toBe(false);
    expect(receiverAccepts(newWebhookSigningSecret(), header, body, 1772366400)).toBe(false);
    const replayedLater = header.replace("t=1772366400", "t=1772366500");
    expect(receiverAccepts(secret, replayedLater, body, 1772366500)).toBe(false);
  });

  it("is verified by verifySignature, which says why it refuses", () => {
    const now = new Date(sentAt.getTime() + 60_000);
    expect(verifySignature(secret, header, body, { now })).toEqual({ valid: true, timestamp: 1772366400 });
    expect(verifySignature(secret, header, `${body} `, { now })).toEqual({
      valid: false,
      reason: "mismatch",
    });
    expect(verifySignature(secret, header, body, { now: new Date(sentAt.getTime() + 301_000) })).toEqual({
      valid: false,
      reason: "expired",
    });
    for (const malformed of [undefined, "", "v1=abc", "t=1772366400", "t=abc,v1=00", "t=1,t=2,v1=00"]) {
      expect(verifySignature(secret, malformed, body, { now }), String(malformed)).toEqual({
        valid: false,
        reason: "malformed",
      });
    }
  });

  it("accepts any of several v1 signatures (room for a secret rotation)", () => {
    const [timestamp, signature] = header.split(",");
    const withOther = `${timestamp},v1=${"0".repeat(64)},${signature}`;
    expect(verifySignature(secret, withOther, body, { now: sentAt }).valid).toBe(true);
  });

  it("makes secrets of 256 random bits with a whsec_ prefix", () => {
    const secrets = new Set(Array.from({ length: 50 }, newWebhookSigningSecret));
    expect(secrets.size).toBe(50);
    for (const one of secrets) expect(one).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });
});
