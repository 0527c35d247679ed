import { CARD_SCHEMES } from "../cards/card-number.ts";
import { amount, optionalAmount } from "../money.ts";
import { sourceField, threeDSFields } from "../three-d-s/schema.ts";
import { booleanField, choice, metadata, text, timestamp } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/**
 * Request bodies of the payment endpoints. Unknown keys are dropped: client libraries send keys this
 * service does not use (`synchronous`, `save_source`, `override_mac_blocking`, …), `null` when
 * unset.
 */
const absentIfNull = (value: unknown) => (value === null || value === "" ? undefined : value);

const source = sourceField("a card id, a customer token id");
const pairs = z.preprocess(absentIfNull, metadata);

/** The fields of a card payment from a browser or app, on authorize and on capture with a source. */
const cardPaymentFields = {
  source,
  incremental: z.preprocess(absentIfNull, booleanField),
  preferred_scheme: choice(CARD_SCHEMES),
  ...threeDSFields,
  metadata: pairs,
  /** Pins the payment to one configuration (`<id>` or `<id>.<gateway name>`): routing explains it as pinned. */
  gateway_configuration_id: z.preprocess(
    absentIfNull,
    z.optional(
      z
        .string("must be a gateway configuration id")
        .check(z.maxLength(100, "must be at most 100 characters")),
    ),
  ),
  /** A cascade after 3DS with one provider may go on without liability shift. */
  retry_drop_liability_shift: z.preprocess(absentIfNull, booleanField),
  /** Tries a card whose Mastercard merchant advice code (03, 21) forbids retries. */
  override_mac_blocking: z.preprocess(absentIfNull, booleanField),
};

/** `capture_amount`: what the automatic capture at `auto_capture_at` captures (default: all of it). */
export const authorizeInput = z.object({
  ...cardPaymentFields,
  auto_capture_at: timestamp,
  capture_amount: optionalAmount,
});

/**
 * Capture: with `source`, authorizes first. `amount` captures part of the authorization (default:
 * all of it); the rest of the authorization is released. `authorize_only=true` (the web library's
 * option) only authorizes, as `POST /authorize` does, and so do `auto_capture_at` and
 * `capture_amount`, which ask for the capture later.
 */
export const captureInput = z.object({
  ...cardPaymentFields,
  amount: optionalAmount,
  authorize_only: z.preprocess(absentIfNull, booleanField),
  auto_capture_at: timestamp,
  capture_amount: optionalAmount,
});
export const incrementInput = z.object({ amount });

/**
 * 3-D Secure without paying (`POST /invoices/{id}/three-d-s`, `/authenticate`): the keys of a card
 * payment (the clients send authorize's to `authenticate`; capture options are dropped as unknown).
 */
export const authenticateInput = z.object(cardPaymentFields);

/**
 * A payout to a card or customer token. `force_gateway_configuration_id` pins the payout to
 * `gateway_configuration_id` as that field pins an authorization (a payout never moves to another).
 */
export const payoutInput = z.object({
  source,
  gateway_configuration_id: cardPaymentFields.gateway_configuration_id,
  force_gateway_configuration_id: z.preprocess(absentIfNull, booleanField),
  metadata: pairs,
});

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
export type AuthenticateInput = z.output<typeof authenticateInput>;
export type PayoutInput = z.output<typeof payoutInput>;
