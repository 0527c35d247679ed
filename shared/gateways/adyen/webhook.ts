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
  let batch: NotificationBatch | null;
  try {
    batch = JSON.parse(rawBody) as NotificationBatch | null;
  } catch {
    return { problem: "the body is not Adyen's JSON notification" };
  }
  const entries = batch?.notificationItems;
  if (!batch || !Array.isArray(entries) || entries.length === 0) {
    return { problem: "the body holds no notification items" };
  }
  const items = entries.map(
    (entry) => (entry as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem,
  );
  if (!items.every(isNotificationItem)) return { problem: "a notification item is malformed" };
  const live = String(batch.live) === "true";
  if (live === sandbox) {
    return {
      problem: `a ${live ? "live" : "test"} notification cannot reach a ${sandbox ? "sandbox" : "live"} environment`,
    };
  }
  const verified = items;
  if (!verified.every((item) => isSignedByAdyen(item, hmacKey))) {
    return { problem: "a notification item is not signed with the configuration's HMAC key" };
  }
  return { items: verified };
}

/** An item with the fields its signature covers, each of the type Adyen sends. */
function isNotificationItem(value: unknown): value is NotificationItem {
  const item = value as Partial<NotificationItem> | null | undefined;
  return (
    typeof item === "object" &&
    item !== null &&
    typeof item.eventCode === "string" &&
    typeof item.pspReference === "string" &&
    typeof item.merchantReference === "string" &&
    typeof item.merchantAccountCode === "string" &&
    (item.success === "true" || item.success === "false") &&
    (item.originalReference === undefined || typeof item.originalReference === "string") &&
    typeof item.amount === "object" &&
    item.amount !== null &&
    typeof item.amount.currency === "string" &&
    Number.isInteger(Number(item.amount.value)) &&
    typeof item.additionalData?.hmacSignature === "string"
  );
}

/** The events that decide one of our operations, and which. */
const SETTLING_EVENTS: Readonly<
  Record<string, "authorization" | "capture" | "void" | "refund" | "increment">
> = {
  AUTHORISATION: "authorization",
  CAPTURE: "capture",
  CAPTURE_FAILED: "capture",
  CANCELLATION: "void",
  REFUND: "refund",
  REFUND_FAILED: "refund",
  AUTHORISATION_ADJUSTMENT: "increment",
};

/** What a verified item means: the reservation of its transaction is settled from Adyen's record. */
export function adyenEffects(item: NotificationItem): GatewayEffect[] {
  const type = SETTLING_EVENTS[item.eventCode];
  if (!type) return [];
  const authorization = type === "authorization";
  return [
    {
      kind: "settle",
      gatewayReference: authorization ? item.pspReference : (item.originalReference ?? item.pspReference),
      transactionId: authorization ? (item.additionalData?.["metadata.transaction_id"] ?? null) : null,
      operation: { type, reference: item.merchantReference },
    },
  ];
}
