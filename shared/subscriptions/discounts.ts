import { nowIn } from "../clock.ts";
import type { Coupon } from "../coupons/coupon.ts";
import { redeemableCoupon, redemptionRefusal } from "../coupons/service.ts";
import { couponRedemption } from "../coupons/store.ts";
import { type PageRequest, pageOfList } from "../db/listing.ts";
import { failedConditions, type TransactItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, conflict, invalidField, notFound, validationFailed } from "../http/errors.ts";
import type { Input } from "../http/input.ts";
import { isId, newId } from "../ids.ts";
import { amountProblemIn, isZeroAmount } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import { applyBillingChange, readTiming, subscriptionOf } from "./billing-change.ts";
import { MAX_DISCOUNTS } from "./changes.ts";
import type { Discount } from "./charges.ts";
import { createDiscountInput, type DiscountFields } from "./schema.ts";
import type { Subscription } from "./subscription.ts";

/**
 * Discounts: `/subscriptions/{id}/discounts`. A discount takes from each renewal's plan and add-ons
 * while it is valid at the renewal's due time (before its `expires_at`, for its coupon's
 * `iteration_count` renewals), in the order `charges.ts` documents, never below zero. It comes from
 * a coupon (`coupon_id`: its amount or percentage and iteration count; one redemption counted, in
 * the same transaction, within the coupon's limits) or is given ad hoc (`name`, `amount`,
 * `expires_at`). Discounts are not prorated: they apply to whole renewals, from the next one that
 * is not yet due. Once used up or expired at a renewal, a discount is gone from the subscription.
 */

export function presentDiscount(discount: Discount, subscription: Subscription) {
  return {
    id: discount.id,
    project_id: subscription.project_id,
    subscription_id: subscription.id,
    coupon_id: discount.coupon_id,
    name: discount.name,
    /** The amount taken off each renewal (null for a percentage). */
    amount: discount.amount_off,
    percent_off: discount.percent_off,
    currency: subscription.currency,
    iteration_count: discount.iteration_count,
    /** Renewals it applied to so far. */
    applied_count: discount.applied_count,
    expires_at: discount.expires_at,
    metadata: discount.metadata,
    sandbox: subscription.sandbox,
    created_at: discount.created_at,
  };
}

export type PresentedDiscount = ReturnType<typeof presentDiscount>;

function discountOf(subscription: Subscription, discountId: string): Discount {
  const discount = isId("discount", discountId)
    ? (subscription.discounts ?? []).find((candidate) => candidate.id === discountId)
    : undefined;
  if (!discount) throw notFound("discount", discountId);
  return discount;
}

/** The discount a coupon gives a subscription; refused when its currency is another. */
export function discountFromCoupon(
  coupon: Coupon,
  subscription: Pick<Subscription, "currency">,
  fields: Pick<DiscountFields, "expires_at" | "metadata" | "name">,
  now: Date,
): Discount {
  if (coupon.amount_off !== null && coupon.currency !== subscription.currency) {
    throw invalidField(
      "coupon_id",
      `must take off an amount in ${subscription.currency}, the subscription's currency (it is in ${coupon.currency})`,
    );
  }
  return {
    id: newId("discount"),
    coupon_id: coupon.id,
    name: fields.name ?? coupon.id,
    amount_off: coupon.amount_off,
    percent_off: coupon.percent_off,
    iteration_count: coupon.iteration_count,
    applied_count: 0,
    expires_at: fields.expires_at ?? null,
    metadata: fields.metadata ?? {},
    created_at: now.toISOString(),
  };
}

/** The subscription with one more discount: at most `MAX_DISCOUNTS`, a coupon at most once. */
export function withDiscount(subscription: Subscription, discount: Discount): Subscription {
  const discounts = subscription.discounts ?? [];
  if (discounts.length >= MAX_DISCOUNTS)
    throw new ApiError(
      400,
      "request.subscription.too-many-discounts",
      `A subscription holds at most ${MAX_DISCOUNTS} discounts.`,
    );
  if (discount.coupon_id !== null && discounts.some((one) => one.coupon_id === discount.coupon_id))
    throw conflict(
      "request.discount.coupon-applied",
      `Coupon ${discount.coupon_id} already gives subscription ${subscription.id} a discount.`,
    );
  return { ...subscription, discounts: [...discounts, discount] };
}

/**
 * A coupon's redemption, written with the change that applies it: when the transaction fails on
 * it, the coupon's refusal (used up, or ended meanwhile) is the answer.
 */
export function redemptionWrites(coupon: Coupon | undefined, now: Date): TransactItem[] {
  return coupon ? [couponRedemption(coupon, now)] : [];
}

export async function refusalOf(caller: Caller, couponId: string, error: unknown, at: number) {
  if (failedConditions(error)?.includes(at)) return redemptionRefusal(caller, couponId);
  return error;
}

/**
 * `POST /subscriptions/{id}/discounts`; `preview=true` answers the discount and the upcoming charge
 * with it, and neither makes it nor redeems the coupon.
 */
export async function createDiscount(
  caller: Caller,
  subscriptionId: string,
  input: { query: Input; body: Input },
) {
  const fields = parseInput(createDiscountInput, input.body);
  const { preview } = readTiming(input);
  const { subscription: before } = await subscriptionOf(caller, subscriptionId);
  if (!fields.coupon_id && (fields.amount === undefined || fields.amount === null)) {
    throw validationFailed("missing-amount", [
      { name: "amount", message: "is required without a coupon_id" },
    ]);
  }
  if (fields.coupon_id && fields.amount) throw invalidField("amount", "cannot be given with a coupon_id");
  const coupon = fields.coupon_id
    ? await redeemableCoupon(caller, fields.coupon_id, nowIn(caller.environment))
    : undefined;
  return applyBillingChange(
    caller,
    subscriptionId,
    {
      preview,
      event: "subscription.discount.created",
      refusal: (error, at) => refusalOf(caller, fields.coupon_id ?? "", error, at),
    },
    (subscription, now) => {
      if (fields.expires_at && Date.parse(fields.expires_at) <= now.getTime())
        throw invalidField("expires_at", "must be in the future");
      const discount = coupon
        ? discountFromCoupon(coupon, subscription, fields, now)
        : adHocDiscount(fields, before, now);
      const next = withDiscount(subscription, discount);
      return {
        next,
        proration: null,
        answer: { discount: presentDiscount(discount, next) },
        writes: redemptionWrites(coupon, now),
      };
    },
  );
}

function adHocDiscount(fields: DiscountFields, subscription: Subscription, now: Date): Discount {
  const amount = fields.amount as string;
  const problem = amountProblemIn(amount, subscription.currency);
  if (problem) throw invalidField("amount", problem);
  if (isZeroAmount(amount)) throw invalidField("amount", "must be above zero");
  return {
    id: newId("discount"),
    coupon_id: null,
    name: fields.name ?? null,
    amount_off: amount,
    percent_off: null,
    iteration_count: null,
    applied_count: 0,
    expires_at: fields.expires_at ?? null,
    metadata: fields.metadata ?? {},
    created_at: now.toISOString(),
  };
}

/** `DELETE /subscriptions/{id}/discounts/{discount_id}`: no longer applied from the next renewal. */
export async function deleteDiscount(caller: Caller, subscriptionId: string, discountId: string) {
  return applyBillingChange(
    caller,
    subscriptionId,
    { preview: false, event: "subscription.discount.deleted" },
    (subscription) => {
      const discount = discountOf(subscription, discountId);
      const next = {
        ...subscription,
        discounts: (subscription.discounts ?? []).filter((one) => one.id !== discountId),
      };
      return { next, proration: null, answer: { discount: presentDiscount(discount, next) } };
    },
  );
}

export async function getDiscount(caller: Caller, subscriptionId: string, discountId: string) {
  const { subscription } = await subscriptionOf(caller, subscriptionId);
  return presentDiscount(discountOf(subscription, discountId), subscription);
}

export async function pageOfDiscounts(caller: Caller, subscriptionId: string, page: PageRequest) {
  const { subscription } = await subscriptionOf(caller, subscriptionId);
  const result = pageOfList(subscription.discounts ?? [], page);
  return { ...result, items: result.items.map((discount) => presentDiscount(discount, subscription)) };
}
