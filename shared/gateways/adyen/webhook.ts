import type { GatewayEffect } from "../webhooks.ts";
import { isSignedByAdyen } from "./notifications.ts";
import type { NotificationItem } from "./wire.ts";

/**
 * Adyen's webhooks: a batch of notification items, each signed on its own with the configuration's
 * HMAC key. A batch with any item not signed by Adyen, or from the other platform (`live` against
 * the environment's kind), is refused whole: nothing in it is kept or acted on.
 */
interface NotificationBatch {
  live?: string | boolean;
  notificationItems?: Array<{ NotificationRequestItem?: NotificationItem }>;
}

export type AdyenBatch = { items: NotificationItem[] } | { problem: string };

export function verifiedBatch(rawBody: string, hmacKey: string | undefined, sandbox: boolean): AdyenBatch {
  if (!hmacKey) return { problem: "the configuration has no hmac_key: its notifications cannot be verified" };
  let batch: NotificationBatch;
  try {
    batch = JSON.parse(rawBody) as NotificationBatch;
  } catch {
    return { problem: "the body is not Adyen's JSON notification" };
  }
  const items = (batch.notificationItems ?? []).map((entry) => entry.NotificationRequestItem);
  if (items.length === 0 || items.some((item) => !item || typeof item.eventCode !== "string")) {
    return { problem: "the body holds no notification items" };
  }
  const live = String(batch.live) === "true";
  if (live === sandbox) {
    return {
      problem: `a ${live ? "live" : "test"} notification cannot reach a ${sandbox ? "sandbox" : "live"} environment`,
    };
  }
  const verified = items as NotificationItem[];
  if (!verified.every((item) => isSignedByAdyen(item, hmacKey))) {
    return { problem: "a notification item is not signed with the configuration's HMAC key" };
  }
  return { items: verified };
}

/** The events that decide one of our operations. */
const SETTLING_EVENTS = new Set([
  "AUTHORISATION",
  "CAPTURE",
  "CAPTURE_FAILED",
  "CANCELLATION",
  "REFUND",
  "REFUND_FAILED",
  "AUTHORISATION_ADJUSTMENT",
]);

/** What a verified item means: the reservation of its transaction is settled from Adyen's record. */
export function adyenEffects(item: NotificationItem): GatewayEffect[] {
  if (!SETTLING_EVENTS.has(item.eventCode)) return [];
  const authorization = item.eventCode === "AUTHORISATION";
  return [
    {
      kind: "settle",
      gatewayReference: authorization ? item.pspReference : (item.originalReference ?? item.pspReference),
      transactionId: authorization ? (item.additionalData?.["metadata.transaction_id"] ?? null) : null,
    },
  ];
}
