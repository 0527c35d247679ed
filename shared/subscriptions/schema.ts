import { COUPON_ID_PATTERN, PLAN_ID_PATTERN } from "../ids.ts";
import { optionalAmount } from "../money.ts";
import { intervalText } from "../plans/interval.ts";
import { PLAN_NAME_LENGTH } from "../plans/schema.ts";
import { currency, httpUrl, integerField, metadata, text, timestamp } from "../validation/fields.ts";
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

/** A coupon to apply as a discount (`POST /subscriptions/{id}/discounts` with `coupon_id`). */
const coupon = id(COUPON_ID_PATTERN, "a coupon id");

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
  /**
   * Ends the trial early or moves it: a later or earlier date, or `now` (the first iteration is
   * charged at once). Only while the subscription is in its trial.
   */
  trial_end_at: z.preprocess(
    notGiven,
    z.union([z.literal("now"), timestamp], {
      error: 'must be "now" or a date and time in ISO 8601 or RFC 1123 format',
    }),
  ),
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

/** When a change is billed: read from the body or, for `DELETE`, the query (`readTiming`). */
export const prorationDate = z.preprocess(notGiven, timestamp);

/** A quantity of an add-on: at least 1 (removing one is `DELETE`). */
export const MAX_QUANTITY = 100_000;
const quantity = z.preprocess(
  notGiven,
  z.optional(
    integerField.check(
      z.refine((value) => value >= 1, "must be at least 1 (delete the add-on to remove it)"),
      z.refine((value) => value <= MAX_QUANTITY, `must be at most ${MAX_QUANTITY}`),
    ),
  ),
);

const addonFields = {
  plan_id: id(PLAN_ID_PATTERN, "a plan id"),
  /** `recurring`, the only kind: billed with each renewal. */
  type: z.preprocess(
    notGiven,
    z.optional(z.literal("recurring", { error: 'must be "recurring" (billed with each renewal)' })),
  ),
  name: terms.name,
  amount: optionalAmount,
  quantity,
  metadata,
};

export const createAddonInput = z.object(addonFields);

export const updateAddonInput = z.object({
  ...addonFields,
  /** Added to the stored quantity (negative takes away): safe when changes race. */
  increment_quantity_by: z.preprocess(
    notGiven,
    z.optional(
      integerField.check(
        z.refine(
          (value) => Math.abs(value) <= MAX_QUANTITY,
          `must be between -${MAX_QUANTITY} and ${MAX_QUANTITY}`,
        ),
      ),
    ),
  ),
});

export const createDiscountInput = z.object({
  coupon_id: coupon,
  name: z.preprocess(notGiven, text(PLAN_NAME_LENGTH)),
  amount: optionalAmount,
  expires_at: z.preprocess(notGiven, timestamp),
  metadata,
});

export type AddonFields = z.output<typeof updateAddonInput>;
export type DiscountFields = z.output<typeof createDiscountInput>;
export type CreateSubscriptionFields = z.output<typeof createSubscriptionInput>;
export type UpdateSubscriptionFields = z.output<typeof updateSubscriptionInput>;
