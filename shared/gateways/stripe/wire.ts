import { currencyDigits, fromProviderMinorUnits, toProviderMinorUnits } from "../../money.ts";

/**
 * Stripe's wire format, typed: the parts of its objects the connector reads, its form encoding, and
 * its minor units. API version pinned (`STRIPE_VERSION`): Stripe answers in the version a request
 * names, whatever the account's default.
 */
export const STRIPE_VERSION = "2024-04-10";

/** Where Stripe is, from the deployment only (never from a merchant's settings). */
export function stripeApiUrl(): string {
  return (process.env.STRIPE_API_URL || "https://api.stripe.com").replace(/\/+$/, "");
}

// ─── Minor units ──────────────────────────────────────────────────────────────────────────────────

/** Charged in whole units by Stripe (MGA has 2 decimals in ISO 4217, none at Stripe). */
const ZERO_DECIMAL = new Set([
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "UGX",
  "VND",
  "VUV",
  "XAF",
  "XOF",
  "XPF",
]);
/** Three-decimal currencies: Stripe takes their minor unit, but only multiples of 10 (the last digit 0). */
const THREE_DECIMAL = new Set(["BHD", "JOD", "KWD", "OMR", "TND"]);
/** Kept in two-decimal form for backwards compatibility, though ISO 4217 gives ISK none. */
const TWO_DECIMAL_EXCEPTIONS = new Set(["ISK"]);

function exponentOf(currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (TWO_DECIMAL_EXCEPTIONS.has(code)) return 2;
  return currencyDigits(code) ?? 2;
}

/** An amount as Stripe takes it (an integer of its minor unit); undefined when Stripe cannot take it. */
export function stripeAmount(amount: string, currency: string): number | undefined {
  const minor = toProviderMinorUnits(amount, exponentOf(currency));
  if (minor === undefined) return undefined;
  if (THREE_DECIMAL.has(currency.toUpperCase()) && minor % 10n !== 0n) return undefined;
  return Number(minor);
}

/** A Stripe amount back in the API's decimal form. */
export function fromStripeAmount(minor: number, currency: string): string {
  return fromProviderMinorUnits(BigInt(minor), currency.toUpperCase(), exponentOf(currency));
}

// ─── Form encoding ────────────────────────────────────────────────────────────────────────────────

export type FormValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | FormValue[]
  | { [key: string]: FormValue };

/**
 * Stripe's `application/x-www-form-urlencoded` with brackets: `metadata[reference]=op_1`,
 * `payment_method_types[]=card`. Unset (undefined, null) values are left out.
 */
export function formEncode(fields: Record<string, FormValue>): string {
  const pairs: string[] = [];
  const add = (key: string, value: FormValue) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        add(`${key}[${index}]`, item);
      });
    } else if (typeof value === "object") {
      for (const [name, inner] of Object.entries(value)) add(`${key}[${name}]`, inner);
    } else {
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
    }
  };
  for (const [name, value] of Object.entries(fields)) add(name, value);
  return pairs.join("&");
}

// ─── Objects ──────────────────────────────────────────────────────────────────────────────────────

export interface StripeError {
  type: string;
  code?: string;
  decline_code?: string;
  message?: string;
  /** Stripe's advice on a decline: `do_not_try_again` means no attempt on this card can succeed. */
  advice_code?: string;
  network_advice_code?: string;
  network_decline_code?: string;
  payment_intent?: PaymentIntent;
  setup_intent?: SetupIntent;
}

export interface CardChecks {
  cvc_check?: string | null;
  address_line1_check?: string | null;
  address_postal_code_check?: string | null;
}

export interface Charge {
  id: string;
  amount_refunded?: number;
  disputed?: boolean;
  payment_method_details?: {
    card?: {
      checks?: CardChecks | null;
      network_transaction_id?: string | null;
      three_d_secure?: { result?: string | null; authentication_flow?: string | null } | null;
      incremental_authorization?: { status?: string } | null;
    } | null;
  } | null;
}

export interface NextAction {
  type: string;
  redirect_to_url?: { url: string; return_url?: string | null } | null;
}

export interface PaymentIntent {
  id: string;
  object: "payment_intent";
  status:
    | "requires_payment_method"
    | "requires_confirmation"
    | "requires_action"
    | "processing"
    | "requires_capture"
    | "canceled"
    | "succeeded";
  amount: number;
  amount_capturable?: number;
  amount_received?: number;
  currency: string;
  metadata?: Record<string, string>;
  next_action?: NextAction | null;
  last_payment_error?: StripeError | null;
  latest_charge?: string | Charge | null;
}

export interface SetupIntent {
  id: string;
  object: "setup_intent";
  status:
    | "requires_payment_method"
    | "requires_confirmation"
    | "requires_action"
    | "processing"
    | "canceled"
    | "succeeded";
  metadata?: Record<string, string>;
  next_action?: NextAction | null;
  last_setup_error?: StripeError | null;
  latest_attempt?: string | { payment_method_details?: Charge["payment_method_details"] } | null;
}

export interface Refund {
  id: string;
  object: "refund";
  amount: number;
  status: "pending" | "requires_action" | "succeeded" | "failed" | "canceled";
  failure_reason?: string | null;
  metadata?: Record<string, string>;
  payment_intent?: string | null;
}

export interface StripeList<T> {
  object: "list" | "search_result";
  data: T[];
  has_more: boolean;
}

/** The charge of a PaymentIntent when it was expanded (`expand[]=latest_charge`). */
export function chargeOf(intent: PaymentIntent): Charge | undefined {
  return typeof intent.latest_charge === "object" && intent.latest_charge !== null
    ? intent.latest_charge
    : undefined;
}
