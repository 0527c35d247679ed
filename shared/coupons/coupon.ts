import type { Caller } from "../http/auth.ts";
import type { CouponFields } from "./schema.ts";

/**
 * A coupon: a discount a subscription can be given (`POST /subscriptions/{id}/discounts` with its
 * `coupon_id`), under an id the merchant chooses (unique in its environment for good: an ended
 * coupon keeps its id). It takes off an amount in its currency or a percentage, for
 * `iteration_count` billing periods of the subscription (null: for as long as it runs). It can be
 * redeemed until `expires_at` and at most `max_redemptions` times (null: no such limit); each
 * redemption is counted in `redeemed_number`. Ending it (`DELETE`) stops new redemptions; discounts
 * made from it before keep it.
 */
export interface Coupon {
  id: string;
  project_id: string;
  /** Exactly one of `amount_off` (with its `currency`) and `percent_off` is set. */
  amount_off: string | null;
  /** A percentage above 0 and at most 100, as sent: "20", "12.5". */
  percent_off: string | null;
  currency: string | null;
  iteration_count: number | null;
  max_redemptions: number | null;
  expires_at: string | null;
  metadata: Record<string, string>;
  redeemed_number: number;
  sandbox: boolean;
  created_at: string;
  updated_at: string;
  /** When the coupon was ended; null while it can be redeemed (within its limits). */
  ended_at: string | null;
}

export function newCoupon(caller: Caller, fields: CouponFields, now: Date): Coupon {
  const at = now.toISOString();
  return {
    id: fields.id,
    project_id: caller.projectId,
    amount_off: fields.amount_off ?? null,
    percent_off: fields.percent_off ?? null,
    currency: fields.currency ?? null,
    iteration_count: fields.iteration_count ?? null,
    max_redemptions: fields.max_redemptions ?? null,
    expires_at: fields.expires_at ?? null,
    metadata: fields.metadata ?? {},
    redeemed_number: 0,
    sandbox: caller.sandbox,
    created_at: at,
    updated_at: at,
    ended_at: null,
  };
}

/** The coupon as the API shows it (the reference's Coupon shape). */
export function presentCoupon(coupon: Coupon) {
  return {
    id: coupon.id,
    project_id: coupon.project_id,
    amount_off: coupon.amount_off,
    percent_off: coupon.percent_off,
    currency: coupon.currency,
    iteration_count: coupon.iteration_count,
    max_redemptions: coupon.max_redemptions,
    expires_at: coupon.expires_at,
    metadata: coupon.metadata,
    redeemed_number: coupon.redeemed_number,
    sandbox: coupon.sandbox,
    created_at: coupon.created_at,
  };
}

export type PresentedCoupon = ReturnType<typeof presentCoupon>;

/** What the coupon takes off, in words: "5.00 EUR off for 3 billing periods", "20% off for good". */
export function couponTerms(coupon: Coupon): string {
  const off =
    coupon.percent_off !== null ? `${coupon.percent_off}%` : `${coupon.amount_off} ${coupon.currency}`;
  const count = coupon.iteration_count;
  const lasting = count === null ? "for good" : `for ${count} billing period${count === 1 ? "" : "s"}`;
  return `${off} off ${lasting}`;
}
