import type { Declined, RetryAdvice } from "../connector.ts";
import { DECLINES, type DeclineType } from "../declines.ts";
import type { PaymentResponse } from "./wire.ts";

/**
 * Adyen's refusals in the API's one vocabulary (`../declines.ts`). The raw response of the card
 * scheme (`additionalData.refusalReasonRaw`, "05 : Do not honor") says most, when the account returns
 * it; else Adyen's own `refusalReasonCode`. A code listed in neither is a generic `card.declined`.
 */
const REFUSAL_REASON_CODES: Readonly<Record<string, DeclineType>> = {
  "2": "card.declined",
  "3": "card.declined",
  "4": "gateway.error",
  "5": "card.blacklisted",
  "6": "card.expired",
  "7": "gateway.validation-error",
  "8": "card.invalid-number",
  "9": "card.declined",
  "10": "card.not-supported",
  "11": "card.failed-three-d-s",
  "12": "card.no-money",
  "14": "card.possible-fraud",
  "15": "card.declined",
  "16": "card.declined",
  "18": "card.exceeded-limits",
  "20": "card.possible-fraud",
  "21": "gateway.error",
  "22": "card.possible-fraud",
  "23": "card.not-authorized",
  "24": "card.failed-cvc",
  "25": "card.blacklisted",
  "26": "card.not-authorized",
  "27": "card.declined",
  "28": "card.exceeded-limits",
  "29": "card.exceeded-limits",
  "31": "card.possible-fraud",
  "32": "card.failed-avs",
  "33": "card.needs-authentication",
  "34": "card.not-supported",
  "35": "card.not-supported",
  "36": "card.needs-authentication",
  "38": "card.needs-authentication",
  "39": "card.failed-three-d-s",
  "41": "card.needs-authentication",
  "42": "card.failed-three-d-s",
  "43": "card.needs-authentication",
  "46": "card.declined",
};

/** ISO 8583 response codes as the schemes send them (`refusalReasonRaw`). */
const SCHEME_RESPONSE_CODES: Readonly<Record<string, DeclineType>> = {
  "05": "card.do-not-honor",
  "14": "card.invalid-number",
  "41": "card.lost",
  "43": "card.stolen",
  "51": "card.no-money",
  "54": "card.expired",
  "57": "card.not-authorized",
  "58": "card.not-authorized",
  "59": "card.possible-fraud",
  "61": "card.exceeded-limits",
  "62": "card.blacklisted",
  "65": "card.exceeded-limits",
  N7: "card.failed-cvc",
  "1A": "card.needs-authentication",
};

/** Refusals no attempt on the card can reverse: revoked authorizations, Adyen's retry block. */
const NEVER_RETRY_REASONS = new Set(["26", "46"]);

export function adyenDecline(
  response: Pick<PaymentResponse, "refusalReasonCode" | "additionalData">,
): Declined {
  const raw = response.additionalData?.refusalReasonRaw?.split(/[\s:]/)[0]?.toUpperCase() ?? "";
  const reason = response.refusalReasonCode ?? "";
  const errorType = SCHEME_RESPONSE_CODES[raw] ?? REFUSAL_REASON_CODES[reason] ?? "card.declined";
  // A Mastercard merchant advice code 03 or 21 forbids retrying this card.
  const advice = response.additionalData?.merchantAdviceCode?.slice(0, 2);
  const doNotRetry: RetryAdvice | undefined =
    advice === "03" || advice === "21" || NEVER_RETRY_REASONS.has(reason) || raw === "41" || raw === "43"
      ? "do-not-retry"
      : undefined;
  return {
    status: "declined",
    errorType,
    message: DECLINES[errorType].message,
    ...(doNotRetry ? { advice: doNotRetry } : {}),
    ...(advice ? { merchantAdviceCode: advice } : {}),
  };
}
