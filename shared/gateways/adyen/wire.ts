import { currencyDigits, fromProviderMinorUnits, toProviderMinorUnits } from "../../money.ts";

/**
 * Adyen's wire format, typed: the Checkout API v71 objects the connector reads and writes, Adyen's
 * minor units, and its endpoints. Where Adyen is comes from the deployment (`ADYEN_CHECKOUT_API_URL`)
 * or, for a live environment, from Adyen's documented live address with the merchant's
 * `live_url_prefix`: never a URL a merchant writes.
 */
export const CHECKOUT_VERSION = "v71";
const TEST_ENDPOINT = `https://checkout-test.adyen.com/${CHECKOUT_VERSION}`;

export function adyenCheckoutUrl(sandbox: boolean, liveUrlPrefix: string | undefined): string {
  const configured = process.env.ADYEN_CHECKOUT_API_URL;
  if (configured) return configured.replace(/\/+$/, "");
  if (sandbox) return TEST_ENDPOINT;
  return `https://${liveUrlPrefix}-checkout-live.adyenpayments.com/checkout/${CHECKOUT_VERSION}`;
}

// ─── Minor units ──────────────────────────────────────────────────────────────────────────────────

/** Where Adyen counts decimals differently from ISO 4217 (its currency codes page). */
const ADYEN_DECIMALS: Readonly<Record<string, number>> = { CLP: 2, CVE: 0, ISK: 2 };

function exponentOf(currency: string): number {
  const code = currency.toUpperCase();
  return ADYEN_DECIMALS[code] ?? currencyDigits(code) ?? 2;
}

/** An amount as Adyen takes it (`{value, currency}` in its minor units); undefined when it cannot. */
export function adyenAmount(amount: string, currency: string): Amount | undefined {
  const minor = toProviderMinorUnits(amount, exponentOf(currency));
  return minor === undefined ? undefined : { value: Number(minor), currency: currency.toUpperCase() };
}

export function fromAdyenAmount(amount: Amount): string {
  return fromProviderMinorUnits(BigInt(amount.value), amount.currency, exponentOf(amount.currency));
}

// ─── Objects ──────────────────────────────────────────────────────────────────────────────────────

export interface Amount {
  value: number;
  currency: string;
}

export interface Action {
  type: string;
  url?: string;
  method?: string;
  data?: Record<string, string>;
  paymentData?: string;
}

export interface PaymentResponse {
  resultCode:
    | "Authorised"
    | "Refused"
    | "Cancelled"
    | "Error"
    | "RedirectShopper"
    | "IdentifyShopper"
    | "ChallengeShopper"
    | "Pending"
    | "Received"
    | "PresentToShopper"
    | "AuthenticationFinished"
    | "AuthenticationNotRequired";
  pspReference?: string;
  merchantReference?: string;
  refusalReason?: string;
  refusalReasonCode?: string;
  action?: Action;
  additionalData?: Record<string, string>;
}

/** The answer to a capture, cancel, refund or amount update: received, decided later (webhook). */
export interface ModificationResponse {
  status: "received";
  pspReference: string;
  reference?: string;
}

export interface AdyenError {
  status: number;
  errorCode?: string;
  message?: string;
  errorType?: string;
  pspReference?: string;
}

/** A webhook's notification item (`NotificationRequestItem`). */
export interface NotificationItem {
  eventCode: string;
  success: "true" | "false";
  pspReference: string;
  originalReference?: string;
  merchantReference: string;
  merchantAccountCode: string;
  amount: Amount;
  reason?: string;
  eventDate?: string;
  additionalData?: Record<string, string>;
}
