import { paymentAmount } from "../money.ts";
import { chosenId, currency, httpUrl, metadata, requiredText } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";
import { intervalText } from "./interval.ts";

/** Plan inputs (`POST /plans`, `PUT /plans/{id}`). Amount decimals are checked against the currency. */
/** `""` clears the trial period on update (as every optional field). */
const blankIsNull = (value: unknown) => (value === "" ? null : value);

export const PLAN_NAME_LENGTH = 80;

export const createPlanInput = z.object({
  id: chosenId,
  name: requiredText(PLAN_NAME_LENGTH),
  amount: paymentAmount,
  currency,
  interval: intervalText,
  trial_period: z.preprocess(blankIsNull, z.optional(z.nullable(intervalText))),
  metadata,
  return_url: httpUrl,
  cancel_url: httpUrl,
});

export type PlanFields = z.output<typeof createPlanInput>;

/**
 * What a plan's `PUT` may change. Its amount, currency and interval are what its subscriptions
 * were made for: sent unchanged (client libraries echo what they read) they are accepted, changed
 * they are refused (make another plan).
 */
export const updatePlanInput = z.object({
  id: z.optional(z.unknown()),
  name: z.optional(requiredText(PLAN_NAME_LENGTH)),
  amount: z.optional(z.unknown()),
  currency: z.optional(z.unknown()),
  interval: z.optional(z.unknown()),
  trial_period: z.preprocess(blankIsNull, z.optional(z.nullable(intervalText))),
  metadata,
  return_url: httpUrl,
  cancel_url: httpUrl,
});

export type PlanChanges = z.output<typeof updatePlanInput>;
