import type { Declined, RetryAdvice } from "../connector.ts";
import { DECLINES, type DeclineType } from "../declines.ts";
import type { StripeError } from "./wire.ts";

/**
 * Stripe's refusals in the API's one vocabulary (`../declines.ts`): its `decline_code` when the
 * issuer gave one, else its error `code`. A code not listed is a generic `card.declined` (soft).
 */
const DECLINE_CODES: Readonly<Record<string, DeclineType>> = {
  generic_decline: "card.declined",
  card_declined: "card.declined",
  call_issuer: "card.declined",
  try_again_later: "card.declined",
  issuer_not_available: "card.declined",
  reenter_transaction: "card.declined",
  no_action_taken: "card.declined",
  approve_with_id: "card.declined",
  do_not_honor: "card.do-not-honor",
  do_not_try_again: "card.do-not-honor",
  insufficient_funds: "card.no-money",
  card_velocity_exceeded: "card.exceeded-limits",
  withdrawal_count_limit_exceeded: "card.exceeded-limits",
  fraudulent: "card.possible-fraud",
  merchant_blacklist: "card.blacklisted",
  pickup_card: "card.blacklisted",
  restricted_card: "card.blacklisted",
  security_violation: "card.blacklisted",
  lost_card: "card.lost",
  stolen_card: "card.stolen",
  expired_card: "card.expired",
  incorrect_number: "card.invalid-number",
  invalid_number: "card.invalid-number",
  invalid_account: "card.invalid-number",
  invalid_expiry_month: "card.invalid-expiry-date",
  invalid_expiry_year: "card.invalid-expiry-date",
  incorrect_cvc: "card.failed-cvc",
  invalid_cvc: "card.failed-cvc",
  incorrect_zip: "card.failed-avs",
  incorrect_address: "card.failed-avs",
  card_not_supported: "card.not-supported",
  currency_not_supported: "card.not-supported",
  not_permitted: "card.not-authorized",
  service_not_allowed: "card.not-authorized",
  transaction_not_allowed: "card.not-authorized",
  stop_payment_order: "card.not-authorized",
  revocation_of_authorization: "card.not-authorized",
  revocation_of_all_authorizations: "card.not-authorized",
  new_account_information_available: "card.inactive",
  authentication_required: "card.needs-authentication",
  offline_pin_required: "card.needs-authentication",
  online_or_offline_pin_required: "card.needs-authentication",
  payment_intent_authentication_failure: "card.failed-three-d-s",
  setup_intent_authentication_failure: "card.failed-three-d-s",
  duplicate_transaction: "payment.duplicate",
  processing_error: "gateway.error",
  charge_exceeds_source_limit: "card.exceeded-limits",
  amount_too_large: "gateway.validation-error",
  amount_too_small: "gateway.validation-error",
  charge_already_refunded: "refund.exceeds-available",
  charge_exceeds_refundable_amount: "refund.exceeds-available",
  testmode_charges_only: "gateway.validation-error",
  live_mode_test_card: "gateway.validation-error",
};

/**
 * Stripe's advice that no attempt on this card can succeed: `do_not_try_again`, the declines the
 * schemes forbid retrying, and a Mastercard merchant advice code 03 or 21 (`network_advice_code`).
 */
const NEVER_RETRY = new Set([
  "do_not_try_again",
  "stop_payment_order",
  "revocation_of_authorization",
  "revocation_of_all_authorizations",
  "pickup_card",
  "lost_card",
  "stolen_card",
]);

export function stripeDecline(error: StripeError | null | undefined): Declined {
  const code = error?.decline_code ?? error?.code ?? "card_declined";
  const errorType = DECLINE_CODES[code] ?? "card.declined";
  const advice: RetryAdvice | undefined =
    error?.advice_code === "do_not_try_again" ||
    NEVER_RETRY.has(code) ||
    error?.network_advice_code === "03" ||
    error?.network_advice_code === "21"
      ? "do-not-retry"
      : undefined;
  return {
    status: "declined",
    errorType,
    message: DECLINES[errorType].message,
    ...(advice ? { advice } : {}),
    ...(error?.network_advice_code ? { merchantAdviceCode: error.network_advice_code } : {}),
  };
}

/** A request Stripe refused as invalid (its parameters, the account's settings): never retried. */
export function stripeRefusal(error: StripeError | null | undefined, status: number): Declined {
  if (error?.type === "card_error") return stripeDecline(error);
  const mapped = error?.code ? DECLINE_CODES[error.code] : undefined;
  if (mapped) return { status: "declined", errorType: mapped, message: DECLINES[mapped].message };
  const why =
    status === 401 || status === 403
      ? "Stripe refused the gateway configuration's secret key: check settings[secret_key]."
      : `Stripe refused the request: ${error?.message ?? `HTTP ${status}`}`;
  return { status: "declined", errorType: "gateway.validation-error", message: why };
}
