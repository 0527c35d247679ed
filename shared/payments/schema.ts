import * as z from "zod";
import { amount, optionalAmount } from "../money.ts";
import { booleanField, choice, metadata, text, timestamp } from "../validation/fields.ts";

/**
 * Request bodies of the payment endpoints. Unknown keys are dropped: client libraries send keys this
 * service does not use (`synchronous`, `capture_amount`, `device`, …), `null` when unset.
 */
const absentIfNull = (value: unknown) => (value === null || value === "" ? undefined : value);

const source = z.preprocess(
  absentIfNull,
  z.string("must be a card id or a customer token id").max(100).optional(),
);
const pairs = z.preprocess(absentIfNull, metadata);

/** `capture_amount`: what the automatic capture at `auto_capture_at` captures (default: all of it). */
export const authorizeInput = z.object({
  source,
  incremental: z.preprocess(absentIfNull, booleanField),
  auto_capture_at: timestamp,
  capture_amount: optionalAmount,
  metadata: pairs,
});

/**
 * Capture: with `source`, authorizes first. `amount` captures part of the authorization (default:
 * all of it); the rest of the authorization is released.
 */
export const captureInput = z.object({
  source,
  amount: optionalAmount,
  incremental: z.preprocess(absentIfNull, booleanField),
  metadata: pairs,
});

export const incrementInput = z.object({ amount });

/** A refund: `amount` defaults to everything left to refund. */
export const refundInput = z.object({
  amount: optionalAmount,
  reason: choice(["customer_request", "duplicate", "fraud"] as const),
  information: text(255),
  metadata: pairs,
});

export type AuthorizeInput = z.output<typeof authorizeInput>;
export type CaptureInput = z.output<typeof captureInput>;
export type RefundInput = z.output<typeof refundInput>;
