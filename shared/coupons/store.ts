import { config } from "../config.ts";
import { keys } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import { type Versioned, versionedStore } from "../db/versioned.ts";
import type { Coupon } from "./coupon.ts";

/**
 * Table access for coupons: one item per coupon (`keys.coupon`), listed and counted while it lives;
 * every change is conditional on the version read, and ending a coupon takes it out of the listing
 * and the count (`shared/db/versioned.ts`). An ended coupon keeps its id for good.
 */
const coupons = versionedStore<Coupon>({
  entity: "coupon",
  key: keys.coupon,
  gone: (coupon) => coupon.ended_at !== null,
});

export type VersionedCoupon = Versioned<Coupon>;

export const insertCoupon = coupons.insert;
export const findCoupon = coupons.find;
export const listCoupons = coupons.list;
export const replaceCoupon = coupons.replace;

/**
 * The write that counts one redemption, for the transaction that makes the discount: conditional on
 * the coupon not ended, below `max_redemptions` and not expired at `now` (the environment's business
 * time). It bumps `version` too, so that a change of the coupon (a put on the version it read)
 * cannot overwrite the count; that change is made again on the new version (`service.ts`). After
 * such a transaction fails on this item, `redemptionRefusal` (`service.ts`) says why.
 */
export function couponRedemption(coupon: Coupon, now: Date): TransactItem {
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.coupon(coupon.project_id, coupon.id),
      UpdateExpression: "SET #redeemed = #redeemed + :one, #version = #version + :one",
      ConditionExpression:
        "attribute_exists(pk) AND attribute_type(#ended, :null)" +
        " AND (attribute_type(#max, :null) OR #redeemed < #max)" +
        " AND (attribute_type(#expires, :null) OR #expires > :now)",
      ExpressionAttributeNames: {
        "#redeemed": "redeemed_number",
        "#version": "version",
        "#ended": "ended_at",
        "#max": "max_redemptions",
        "#expires": "expires_at",
      },
      // Timestamps are stored as `toISOString` writes them, so that text order is time order.
      ExpressionAttributeValues: { ":one": 1, ":null": "NULL", ":now": now.toISOString() },
    },
  };
}
