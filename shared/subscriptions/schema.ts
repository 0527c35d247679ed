import { PLAN_ID_PATTERN } from "../ids.ts";
import { optionalAmount } from "../money.ts";
import { intervalText } from "../plans/interval.ts";
import { PLAN_NAME_LENGTH } from "../plans/schema.ts";
import { currency, httpUrl, metadata, text, timestamp } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/**
 * Subscription inputs. Client libraries send `cancel_at`, `trial_end_at`, `return_url`,
 * `cancel_url`, `metadata` and `coupon_id`, mostly `null`; one sends its language's literals in the
 * query string of `DELETE` (`None`, `True`): `None` means not given.
 */
const notGiven = (value: unknown) =>
  value === "" || value === "None" || value === "null" ? undefined : value;

const id = (pattern: RegExp, description: string) =>
  z.preprocess(
    notGiven,
    z.optional(z.string("must be a string").check(z.regex(pattern, `must be ${description}`))),
  );

const terms = {
  name: z.preprocess(
    notGiven,
    z.optional(z.string("must be a string").check(z.minLength(1), z.maxLength(PLAN_NAME_LENGTH))),
  ),
  amount: optionalAmount,
  currency: z.preprocess(notGiven, z.optional(currency)),
  interval: z.preprocess(notGiven, z.optional(intervalText)),
};

const source = z.preprocess(
  notGiven,
  z.optional(z.string("must be a customer token or card id").check(z.maxLength(100))),
);

/** Coupons are not offered: a coupon is refused rather than ignored (it would change the price). */
const coupon = z.preprocess(
  notGiven,
  z.optional(z.undefined({ error: "coupons are not supported: leave coupon_id out or null" })),
);

export const createSubscriptionInput = z.object({
  customer_id: z.string({
    error: (issue) => (issue.input === undefined ? "is required" : "must be a string"),
  }),
  plan_id: id(PLAN_ID_PATTERN, "a plan id"),
  ...terms,
  source,
  trial_end_at: z.preprocess(notGiven, timestamp),
  cancel_at: z.preprocess(notGiven, timestamp),
  return_url: httpUrl,
  cancel_url: httpUrl,
  metadata,
  coupon_id: coupon,
});

export const updateSubscriptionInput = z.object({
  plan_id: id(PLAN_ID_PATTERN, "a plan id"),
  ...terms,
  source,
  /** A later date moves a pending cancellation; `""` withdraws it. */
  cancel_at: z.preprocess((value) => (value === "None" || value === "null" ? undefined : value), timestamp),
  return_url: httpUrl,
  cancel_url: httpUrl,
  metadata,
  coupon_id: coupon,
});

export const cancelSubscriptionInput = z.object({
  cancel_at: z.preprocess(notGiven, timestamp),
  cancellation_reason: z.preprocess(notGiven, text(255)),
});

export type CreateSubscriptionFields = z.output<typeof createSubscriptionInput>;
export type UpdateSubscriptionFields = z.output<typeof updateSubscriptionInput>;
