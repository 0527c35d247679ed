import { activityWrite } from "../activities/activity.ts";
import { clock, nowIn } from "../clock.ts";
import type { PageRequest } from "../db/listing.ts";
import type { TransactItem } from "../db/transactions.ts";
import { eventWrite } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, busy, conflict, invalidField, notFound, validationFailed } from "../http/errors.ts";
import { COUPON_ID_PATTERN } from "../ids.ts";
import { amountProblemIn, compareAmounts, isAmount } from "../money.ts";
import { parseTimestamp } from "../validation/fields.ts";
import { parseInput } from "../validation/parse.ts";
import { type Coupon, couponTerms, newCoupon, type PresentedCoupon, presentCoupon } from "./coupon.ts";
import {
  type CouponChanges,
  type CouponFields,
  createCouponInput,
  FIXED_COUPON_FIELDS,
  updateCouponInput,
} from "./schema.ts";
import { findCoupon, insertCoupon, listCoupons, replaceCoupon, type VersionedCoupon } from "./store.ts";

/** Coupons: create under the merchant's id, read, list, change metadata, end; and redeem. */
export const COUPON_CURSOR = { pattern: COUPON_ID_PATTERN, description: "a coupon id" } as const;

/**
 * Attempts at a change whose coupon keeps changing under it. Redemptions bump the version without
 * touching what a change writes (metadata, the end), so a change that lost to one is made again.
 */
const CHANGE_ATTEMPTS = 4;

const concurrentChange = (id: string) =>
  busy("request.coupon.concurrent-update", `Coupon ${id} is being changed by another request.`);

const subject = (coupon: Coupon) => ({ type: "coupon", id: coupon.id });

/** `POST /coupons` */
export async function createCoupon(
  caller: Caller,
  input: unknown,
  commit: (presented: PresentedCoupon) => TransactItem[],
): Promise<PresentedCoupon> {
  const fields = parseInput(createCouponInput, input);
  checkDiscount(fields);
  if (fields.expires_at && Date.parse(fields.expires_at) <= nowIn(caller.environment).getTime()) {
    throw invalidField("expires_at", "must be in the future (on the environment's clock)");
  }
  const now = clock.now();
  const coupon = newCoupon(caller, fields, now);
  const presented = presentCoupon(coupon);
  const outcome = await insertCoupon(coupon, [
    ...eventWrite(caller.projectId, "coupon.created", { coupon: presented }, now),
    ...activityWrite(
      caller,
      "coupon.created",
      `Coupon ${coupon.id} created (${couponTerms(coupon)})`,
      subject(coupon),
      now,
    ),
    ...commit(presented),
  ]);
  if (outcome === "duplicate") {
    throw conflict(
      "request.coupon.duplicate",
      `This environment already has a coupon with the id ${coupon.id}.`,
    );
  }
  return presented;
}

/** Exactly one of an amount (in its currency, which it must fit) and a percentage. */
function checkDiscount(fields: CouponFields): void {
  const { amount_off: amountOff, percent_off: percentOff, currency } = fields;
  if (amountOff == null && percentOff == null) {
    throw validationFailed("missing-amount-off", [
      { name: "amount_off", message: "is required unless percent_off is given" },
      { name: "percent_off", message: "is required unless amount_off is given" },
    ]);
  }
  if (amountOff != null && percentOff != null) {
    throw validationFailed("invalid-amount-off", [
      {
        name: "amount_off",
        message: "cannot be given with percent_off: a coupon takes off an amount or a percentage",
      },
      {
        name: "percent_off",
        message: "cannot be given with amount_off: a coupon takes off an amount or a percentage",
      },
    ]);
  }
  if (percentOff != null && currency != null) {
    throw invalidField("currency", "cannot be given with percent_off: a percentage takes off any currency");
  }
  if (amountOff != null) {
    if (currency == null)
      throw validationFailed("missing-currency", [
        { name: "currency", message: "is required with amount_off" },
      ]);
    const problem = amountProblemIn(amountOff, currency);
    if (problem) throw invalidField("amount_off", problem);
  }
}

/** A coupon that has not been ended (an ended one is gone for the API). */
async function liveCoupon(caller: Caller, id: string): Promise<VersionedCoupon> {
  const found = COUPON_ID_PATTERN.test(id) ? await findCoupon(caller.projectId, id) : undefined;
  if (!found || found.value.ended_at !== null) throw notFound("coupon", id);
  return found;
}

export async function getCoupon(caller: Caller, id: string): Promise<PresentedCoupon> {
  return presentCoupon((await liveCoupon(caller, id)).value);
}

export async function pageOfCoupons(caller: Caller, page: PageRequest) {
  const result = await listCoupons(caller.projectId, page);
  return { ...result, items: result.items.map(presentCoupon) };
}

/** `PUT /coupons/{id}`: its metadata; what it takes off, and for how long and how often, stays. */
export async function changeCoupon(caller: Caller, id: string, input: unknown): Promise<PresentedCoupon> {
  const changes = parseInput(updateCouponInput, input);
  const changed = await rewrite(caller, id, (coupon, now) => {
    refuseFixedChanges(coupon, changes);
    const next: Coupon = {
      ...coupon,
      ...(changes.metadata !== undefined ? { metadata: changes.metadata } : {}),
      updated_at: now.toISOString(),
    };
    return {
      next,
      alsoWrite: [
        ...eventWrite(caller.projectId, "coupon.updated", { coupon: presentCoupon(next) }, now),
        ...activityWrite(
          caller,
          "coupon.updated",
          `Coupon ${id} updated (${changes.metadata !== undefined ? "metadata" : "nothing sent"})`,
          subject(next),
          now,
        ),
      ],
    };
  });
  return presentCoupon(changed);
}

/**
 * The fixed fields sent with their current value pass (client libraries send the coupon back as
 * they read it); any other value is a 400 naming the field. An empty value is no value, as on plans.
 */
function refuseFixedChanges(coupon: Coupon, changes: CouponChanges): void {
  for (const name of FIXED_COUPON_FIELDS) {
    const value = changes[name];
    if (value === undefined || value === "" || isCurrent(coupon, name, value)) continue;
    throw invalidField(name, "cannot change (only metadata can): create another coupon instead");
  }
}

function isCurrent(coupon: Coupon, name: (typeof FIXED_COUPON_FIELDS)[number], value: unknown): boolean {
  const current = coupon[name];
  if (current === null || typeof value !== "string") return false;
  switch (name) {
    case "amount_off":
    case "percent_off":
      return isAmount(value) && compareAmounts(value, String(current)) === 0;
    case "currency":
      return value.toUpperCase() === current;
    case "expires_at":
      return parseTimestamp(value)?.getTime() === Date.parse(String(current));
    default:
      // The id, and counts: JSON numbers arrive as the text they were sent as.
      return value === String(current);
  }
}

/** `DELETE /coupons/{id}`: no new redemptions; discounts made from it go on. */
export async function endCoupon(caller: Caller, id: string): Promise<void> {
  await rewrite(caller, id, (coupon, now) => {
    const next: Coupon = { ...coupon, ended_at: now.toISOString(), updated_at: now.toISOString() };
    return {
      next,
      alsoWrite: [
        ...eventWrite(caller.projectId, "coupon.deleted", { coupon: presentCoupon(next) }, now),
        ...activityWrite(
          caller,
          "coupon.deleted",
          `Coupon ${id} ended: it can no longer be redeemed`,
          subject(next),
          now,
        ),
      ],
    };
  });
}

/**
 * Replaces the live coupon with what `change` makes of it, on the version read; made again on the
 * coupon read anew when another write (a redemption) got there first.
 */
async function rewrite(
  caller: Caller,
  id: string,
  change: (coupon: Coupon, now: Date) => { next: Coupon; alsoWrite: TransactItem[] },
): Promise<Coupon> {
  for (let attempt = 1; ; attempt++) {
    const current = await liveCoupon(caller, id);
    const { next, alsoWrite } = change(current.value, clock.now());
    if ((await replaceCoupon(current, next, alsoWrite)) === "replaced") return next;
    if (attempt >= CHANGE_ATTEMPTS) throw concurrentChange(id);
  }
}

const refusal = (errorType: string, message: string) =>
  new ApiError(400, errorType, message, [{ name: "coupon_id", message }]);

const expired = (coupon: Coupon) =>
  refusal("request.coupon.expired", `The coupon ${coupon.id} expired at ${coupon.expires_at}.`);

const exhausted = (coupon: Coupon) =>
  refusal(
    "request.coupon.exhausted",
    `The coupon ${coupon.id} was redeemed ${coupon.max_redemptions} times, its max_redemptions.`,
  );

/** Why a live coupon cannot be redeemed at `now`, or undefined when it can. */
function redemptionProblem(coupon: Coupon, now: Date): ApiError | undefined {
  if (coupon.expires_at !== null && now.getTime() >= Date.parse(coupon.expires_at)) return expired(coupon);
  if (coupon.max_redemptions !== null && coupon.redeemed_number >= coupon.max_redemptions) {
    return exhausted(coupon);
  }
  return undefined;
}

/**
 * The coupon if it can be redeemed at `now` (the environment's business time), else the error to
 * answer: 404 `resource.coupon.not-found` (unknown or ended), 400 `request.coupon.expired` or
 * `request.coupon.exhausted` naming `coupon_id`. Count the redemption with `couponRedemption`
 * (`store.ts`) in the transaction that makes the discount: that write decides, this read only
 * answers early.
 */
export async function redeemableCoupon(caller: Caller, id: string, now: Date): Promise<Coupon> {
  const coupon = (await liveCoupon(caller, id)).value;
  const problem = redemptionProblem(coupon, now);
  if (problem) throw problem;
  return coupon;
}

/**
 * After a transaction holding `couponRedemption` failed on that item: the error to answer, from the
 * coupon read again (ended or gone, exhausted, or expired).
 */
export async function redemptionRefusal(caller: Caller, id: string): Promise<ApiError> {
  const found = COUPON_ID_PATTERN.test(id) ? await findCoupon(caller.projectId, id) : undefined;
  if (!found || found.value.ended_at !== null) return notFound("coupon", id);
  const coupon = found.value;
  const problem = redemptionProblem(coupon, nowIn(caller.environment));
  if (problem) return problem;
  // The write's `now` may be ahead of the environment's clock read here: its expiry is what failed.
  return coupon.expires_at !== null ? expired(coupon) : concurrentChange(id);
}
