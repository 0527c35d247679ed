import { createHmac, timingSafeEqual } from "node:crypto";
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../../config.ts";
import { dynamo } from "../../db/client.ts";
import { keys } from "../../db/keys.ts";
import type { NotificationItem } from "./wire.ts";

/**
 * Adyen's webhooks ("notifications"): verified by their HMAC signature, then kept, one item per
 * event of one of our operations (Adyen's `merchantReference` is our operation's reference). They
 * are Adyen's record as far as we can read it: Checkout has no API to ask how a payment or a
 * modification ended, so `lookup` reads them.
 */
const ENTITY = "gateway-notification";
/** Kept as long as a reservation can wait for them, and longer. */
const KEEP_SECONDS = 90 * 24 * 3600;

/**
 * Whether Adyen signed the item with the configuration's HMAC key (hex): HMAC-SHA256, base64, over
 * `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`,
 * compared in constant time.
 */
export function isSignedByAdyen(item: NotificationItem, hmacKeyHex: string): boolean {
  const given = item.additionalData?.hmacSignature;
  if (!given || !/^[0-9a-f]+$/i.test(hmacKeyHex) || hmacKeyHex.length % 2 !== 0) return false;
  const expected = createHmac("sha256", Buffer.from(hmacKeyHex, "hex")).update(signingString(item)).digest();
  const received = Buffer.from(given, "base64");
  return received.length === expected.length && timingSafeEqual(received, expected);
}

export function signingString(item: NotificationItem): string {
  return [
    item.pspReference,
    item.originalReference ?? "",
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount?.value ?? ""),
    item.amount?.currency ?? "",
    item.eventCode,
    item.success,
  ].join(":");
}

/** Keeps a verified notification (a repeat overwrites it with the same content). */
export async function recordNotification(
  scope: string,
  configurationId: string,
  item: NotificationItem,
): Promise<void> {
  await dynamo
    .send(
      new PutCommand({
        TableName: config.tableName,
        Item: {
          ...keys.gatewayNotification(
            scope,
            configurationId,
            item.merchantReference,
            `${item.eventCode}#${item.pspReference}`,
          ),
          type: ENTITY,
          event_code: item.eventCode,
          success: item.success,
          psp_reference: item.pspReference,
          original_reference: item.originalReference ?? null,
          merchant_reference: item.merchantReference,
          amount: item.amount,
          reason: item.reason ?? null,
          additional_data: withoutSignature(item.additionalData),
          event_date: item.eventDate ?? null,
          received_at: new Date().toISOString(),
          expires_at: Math.floor(Date.now() / 1000) + KEEP_SECONDS,
        },
        // Adyen sends a notification again until it is accepted: the first receipt is kept.
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    )
    .catch((error: unknown) => {
      if ((error as { name?: string }).name !== "ConditionalCheckFailedException") throw error;
    });
}

/** What Adyen said of `reference` with one of `events` (the latest), if it said anything yet. */
export async function findNotification(
  scope: string,
  configurationId: string,
  reference: string,
  events: readonly string[],
): Promise<NotificationItem | undefined> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: {
        ":pk": keys.gatewayNotification(scope, configurationId, reference, "").pk,
      },
      ConsistentRead: true,
    }),
  );
  // The latest decision wins, by when Adyen made it (its eventDate), else when it reached us; a
  // failure reported after a success (CAPTURE_FAILED after CAPTURE) is the later one.
  const when = (item: Record<string, unknown>) => String(item.event_date ?? item.received_at ?? "");
  const found = Items.filter((item) => events.includes(String(item.event_code))).sort((a, b) =>
    when(a) < when(b) ? 1 : when(a) > when(b) ? -1 : String(a.event_code).endsWith("_FAILED") ? -1 : 1,
  )[0];
  if (!found) return undefined;
  return {
    eventCode: String(found.event_code),
    success: found.success === "true" ? "true" : "false",
    pspReference: String(found.psp_reference),
    ...(found.original_reference ? { originalReference: String(found.original_reference) } : {}),
    merchantReference: String(found.merchant_reference),
    merchantAccountCode: "",
    amount: found.amount as NotificationItem["amount"],
    ...(found.reason ? { reason: String(found.reason) } : {}),
    additionalData: (found.additional_data ?? {}) as Record<string, string>,
  };
}

function withoutSignature(additional: Record<string, string> | undefined): Record<string, string> {
  const { hmacSignature: _signature, ...rest } = additional ?? {};
  return rest;
}
