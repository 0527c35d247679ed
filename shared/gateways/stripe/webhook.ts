import { createHmac, timingSafeEqual } from "node:crypto";
import type { GatewayEffect } from "../webhooks.ts";
import type { PaymentIntent, Refund } from "./wire.ts";

/**
 * Stripe's webhooks: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=…]`, HMAC-SHA256 with the
 * endpoint's signing secret over `<t>.<raw body>`, refused beyond a 300 s tolerance (Stripe's own
 * libraries' default). What an event means for our transactions is returned as effects.
 */
export const STRIPE_SIGNATURE_TOLERANCE_S = 300;

/** Why the request is not Stripe's, signed with `secret`, now; undefined when it is. */
export function stripeSignatureProblem(
  header: string | undefined,
  rawBody: string,
  secret: string,
  nowSeconds: number,
): string | undefined {
  if (!header) return "Stripe-Signature is missing";
  const parts = header.split(",").map((part) => part.split("="));
  const timestamp = Number(parts.find(([name]) => name === "t")?.[1]);
  const signatures = parts.filter(([name]) => name === "v1").map(([, value]) => value ?? "");
  if (!Number.isInteger(timestamp) || signatures.length === 0) return "Stripe-Signature is malformed";
  if (Math.abs(nowSeconds - timestamp) > STRIPE_SIGNATURE_TOLERANCE_S) {
    return `Stripe-Signature is older than ${STRIPE_SIGNATURE_TOLERANCE_S} s (a replay?)`;
  }
  const expected = createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest();
  const matches = signatures.some((signature) => {
    const given = Buffer.from(signature, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? undefined : "Stripe-Signature does not match the endpoint's signing secret";
}

interface StripeEvent {
  id: string;
  type: string;
  livemode?: boolean;
  data: { object: Record<string, unknown> };
}

/**
 * What a verified event means for our transactions. A PaymentIntent's change may settle an operation
 * we left reserved (a timeout, a crash): its transaction's reservation is resolved from Stripe's
 * record. A refund that failed after Stripe accepted it is recorded as failed. Other events change
 * nothing here.
 */
export function stripeEffects(body: unknown): GatewayEffect[] {
  const event = body as StripeEvent;
  if (typeof event?.type !== "string" || typeof event?.data?.object !== "object") return [];
  if (event.type.startsWith("payment_intent.")) {
    const intent = event.data.object as unknown as PaymentIntent;
    return [
      {
        kind: "settle",
        gatewayReference: intent.id,
        transactionId: intent.metadata?.transaction_id ?? null,
      },
    ];
  }
  if (event.type === "charge.refund.updated" || event.type === "refund.updated") {
    const refund = event.data.object as unknown as Refund;
    if (refund.status !== "failed" && refund.status !== "canceled") return [];
    if (!refund.payment_intent || !refund.metadata?.refund_id) return [];
    return [
      { kind: "refund-failed", gatewayReference: refund.payment_intent, refundId: refund.metadata.refund_id },
    ];
  }
  return [];
}

/** Whether the event comes from Stripe's live mode; undefined when it does not say (refused). */
export function stripeEventLive(body: unknown): boolean | undefined {
  const live = (body as StripeEvent | undefined)?.livemode;
  return typeof live === "boolean" ? live : undefined;
}
