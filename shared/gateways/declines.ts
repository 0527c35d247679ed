/**
 * The one catalogue of decline codes: every refusal a connector reports is one of these, whatever
 * the provider said (each connector maps its provider's codes here, in one table at the top of its
 * module). A code says what went wrong in the API's words (`error_type`), and whether another
 * attempt may succeed: `soft` (the same card later, or another route, may be approved: insufficient
 * funds, an issuer or provider that could not answer, authentication needed) or `hard` (no attempt
 * on this card can succeed: stolen, expired, blocked, invalid). Retries and cascades follow it.
 *
 * `GET /error-codes` serves the catalogue, grouped by category as the official clients read it.
 */
export type ErrorCategory =
  | "generic"
  | "service"
  | "gateway"
  | "card"
  | "check"
  | "shipping"
  | "customer"
  | "payment"
  | "refund"
  | "wallet"
  | "request";

export interface DeclineDefinition {
  category: ErrorCategory;
  /** `soft`: another attempt may succeed; `hard`: none can, on this card. */
  retry: "soft" | "hard";
  message: string;
}

export const DECLINES = {
  "card.declined": { category: "card", retry: "soft", message: "The card was declined." },
  "card.do-not-honor": {
    category: "card",
    retry: "soft",
    message: "The issuer declined the card: do not honor.",
  },
  "card.no-money": { category: "card", retry: "soft", message: "The card has insufficient funds." },
  "card.exceeded-limits": {
    category: "card",
    retry: "soft",
    message: "The payment exceeds the card's limits (amount or frequency).",
  },
  "card.possible-fraud": {
    category: "card",
    retry: "hard",
    message: "The issuer declined the card as possible fraud.",
  },
  "card.expired": { category: "card", retry: "hard", message: "The card has expired." },
  "card.invalid-number": { category: "card", retry: "hard", message: "The card number is not valid." },
  "card.invalid-expiry-date": {
    category: "card",
    retry: "hard",
    message: "The card's expiry date is wrong.",
  },
  "card.stolen": { category: "card", retry: "hard", message: "The card was reported stolen." },
  "card.lost": { category: "card", retry: "hard", message: "The card was reported lost." },
  "card.inactive": { category: "card", retry: "hard", message: "The card is inactive." },
  "card.not-authorized": {
    category: "card",
    retry: "hard",
    message: "The card is not authorized for this payment.",
  },
  "card.not-supported": {
    category: "card",
    retry: "hard",
    message: "The card does not support this kind of payment or currency.",
  },
  "card.region-not-authorized": {
    category: "card",
    retry: "hard",
    message: "The card may not be used in this region.",
  },
  "card.blacklisted": { category: "card", retry: "hard", message: "The card is blocked." },
  "card.needs-authentication": {
    category: "card",
    retry: "soft",
    message: "The issuer requires the cardholder to authenticate (3-D Secure): ask them to pay again.",
  },
  "card.failed-three-d-s": {
    category: "card",
    retry: "soft",
    message: "3-D Secure authentication of the cardholder failed.",
  },
  "card.do-not-retry": {
    category: "card",
    retry: "hard",
    message:
      "The card scheme forbids another attempt on this card: the issuer's merchant advice code (03 or 21) said not to try again.",
  },
  "card.reattempt-limit": {
    category: "card",
    retry: "soft",
    message:
      "The card reached its scheme's limit of reattempts after declines (Visa: 15 in 30 days); it may be tried again later.",
  },
  "card.failed-cvc": {
    category: "check",
    retry: "soft",
    message: "The card's security code (CVC) check failed.",
  },
  "card.failed-avs": { category: "check", retry: "soft", message: "The card's address (AVS) check failed." },
  "card.failed-cvc-and-avs": {
    category: "check",
    retry: "soft",
    message: "The card's security code (CVC) and address (AVS) checks failed.",
  },
  "gateway.declined": { category: "gateway", retry: "soft", message: "The gateway declined the operation." },
  "gateway.validation-error": {
    category: "gateway",
    retry: "hard",
    message: "The gateway refused the request as invalid.",
  },
  "gateway.error": {
    category: "gateway",
    retry: "soft",
    message: "The gateway failed to process the operation.",
  },
  "gateway.unavailable": {
    category: "service",
    retry: "soft",
    message: "The gateway could not be reached or is unavailable; nothing was done.",
  },
  "gateway.rate-limited": {
    category: "service",
    retry: "soft",
    message: "The gateway refused the request for too many requests; try again later.",
  },
  "payment.duplicate": {
    category: "payment",
    retry: "hard",
    message: "The gateway refused the payment as a duplicate of an earlier one.",
  },
  "payment.increment-not-supported": {
    category: "payment",
    retry: "hard",
    message: "The card or its network does not support incremental authorizations.",
  },
  "refund.declined": { category: "refund", retry: "soft", message: "The refund was declined." },
  "refund.exceeds-available": {
    category: "refund",
    retry: "hard",
    message: "The refund exceeds what can still be refunded at the gateway.",
  },
} as const satisfies Record<string, DeclineDefinition>;

export type DeclineType = keyof typeof DECLINES;

export function isDeclineType(code: string): code is DeclineType {
  return Object.hasOwn(DECLINES, code);
}

/** Whether another attempt with this card may succeed after `code` (unknown codes are soft). */
export function isSoftDecline(code: string): boolean {
  return !isDeclineType(code) || DECLINES[code].retry === "soft";
}

const CATEGORIES: readonly ErrorCategory[] = [
  "generic",
  "service",
  "gateway",
  "card",
  "check",
  "shipping",
  "customer",
  "payment",
  "refund",
  "wallet",
  "request",
];

/**
 * `GET /error-codes`: `gateway` lists the codes of each category (the shape the official clients
 * read); `codes` says, for each, whether it is a soft or a hard decline and what it means.
 */
export function presentErrorCodes() {
  const entries = Object.entries(DECLINES) as Array<[DeclineType, DeclineDefinition]>;
  return {
    gateway: Object.fromEntries(
      CATEGORIES.map((category) => [
        category,
        entries.filter(([, definition]) => definition.category === category).map(([code]) => code),
      ]),
    ),
    codes: entries.map(([code, definition]) => ({
      code,
      category: definition.category,
      retry: definition.retry,
      message: definition.message,
    })),
  };
}
