import { amountProblem, compareAmounts, decimalPlaces, isZeroAmount, paymentAmount } from "../money.ts";
import { chosenId, currency, integerField, metadata, timestamp } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/**
 * Coupon inputs (`POST /coupons`, `PUT /coupons/{id}`). What needs two fields at once (exactly one
 * of `amount_off` and `percent_off`, `currency` only with an amount, an amount that fits its
 * currency, `expires_at` ahead of the environment's clock) is checked in `service.ts`.
 */
const blankIsNull = (value: unknown) => (value === "" ? null : value);

/** An optional field; `""` (form bodies) and `null` (JSON) leave it unset. */
const unset = <S extends z.core.$ZodType>(schema: S) =>
  z.preprocess(blankIsNull, z.optional(z.nullable(schema)));

export const PERCENT_OFF_DECIMALS = 2;

/** Why `text` is not a coupon's percentage: above 0, at most 100, at most 2 decimals ("20", "12.5"). */
function percentOffProblem(text: string): string | undefined {
  if (amountProblem(text) !== undefined) return "must be a decimal number such as 20 or 12.5";
  if (decimalPlaces(text) > PERCENT_OFF_DECIMALS) return `must have at most ${PERCENT_OFF_DECIMALS} decimals`;
  if (isZeroAmount(text)) return "must be above 0";
  if (compareAmounts(text, "100") > 0) return "must be at most 100";
  return undefined;
}

/** A percentage, kept as sent (JSON numbers arrive as the text they were sent as). */
const percentOff = z.string("must be a percentage such as 20 or 12.5").check(
  z.superRefine((value, ctx) => {
    const problem = percentOffProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
);

/** A count of at least 1 (`iteration_count`, `max_redemptions`); unset means no limit. */
const positiveCount = unset(integerField.check(z.refine((value) => value >= 1, "must be at least 1")));

export const createCouponInput = z.object({
  id: chosenId,
  amount_off: unset(paymentAmount),
  percent_off: unset(percentOff),
  currency: unset(currency),
  iteration_count: positiveCount,
  max_redemptions: positiveCount,
  expires_at: timestamp,
  metadata,
});

export type CouponFields = z.output<typeof createCouponInput>;

/** The fields a `PUT` cannot change: echoed as they are they pass (`service.ts`), else a 400. */
export const FIXED_COUPON_FIELDS = [
  "id",
  "amount_off",
  "percent_off",
  "currency",
  "iteration_count",
  "max_redemptions",
  "expires_at",
] as const;

const fixed = z
  .optional(z.unknown())
  .check(z.meta({ description: "Cannot change: accepted only as the coupon's own value" }));

/**
 * What a coupon's `PUT` may change: its metadata. Client libraries send the coupon back as they
 * read it: its fixed fields are accepted unchanged and refused changed; what the API alone writes
 * (`redeemed_number`, `sandbox`, `created_at`, …) is dropped, as on plans.
 */
export const updateCouponInput = z.object({
  metadata,
  ...Object.fromEntries(FIXED_COUPON_FIELDS.map((name) => [name, fixed])),
} as { metadata: typeof metadata } & Record<(typeof FIXED_COUPON_FIELDS)[number], typeof fixed>);

export type CouponChanges = z.output<typeof updateCouponInput>;
