import type { Card } from "../cards/card.ts";
import type { Declined } from "../gateways/connector.ts";
import { DECLINES } from "../gateways/declines.ts";

/**
 * The card schemes' retry rules, which hold whichever provider an attempt goes through (a cascade,
 * a merchant's retry, a subscription's dunning):
 *
 * - **Mastercard merchant advice codes** 03 ("do not try again") and 21 ("payment cancelled") on a
 *   decline forbid any further attempt on that card: the card remembers the code, and every later
 *   attempt is refused before reaching a provider (`card.do-not-retry`), unless the request sets
 *   `override_mac_blocking` (the merchant has new information from the cardholder).
 * - **Visa's reattempt limit**: after a decline, at most 15 reattempts of the card in 30 days. The
 *   card keeps when its authorizations were declined since its last approval; an attempt when 16 of
 *   them fall within the last 30 days (the first decline and 15 declined reattempts) is refused
 *   before reaching a provider (`card.reattempt-limit`, a soft decline: the window moves on).
 */
export const BLOCKING_ADVICE_CODES: readonly string[] = ["03", "21"];
export const VISA_REATTEMPTS = 15;
export const VISA_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** What the rules read of a card: its scheme and its retry history (a stored `Card` is one). */
export type SchemeState = Pick<Card, "scheme" | "declined_at" | "merchant_advice_block">;

export interface SchemeCheck {
  /** Why the attempt may not be made; undefined when it may. */
  refusal?: Declined;
  /** What the rules said, for the routing explanation. */
  notes: string[];
}

/** Whether one more attempt with this card is allowed now (`declinedNow`: this request's own declines so far). */
export function schemeCheck(
  card: SchemeState,
  options: { overrideMacBlocking: boolean; declinedNow: readonly string[] },
  now: Date,
): SchemeCheck {
  const notes: string[] = [];
  const block = card.merchant_advice_block;
  if (block) {
    if (!options.overrideMacBlocking) {
      return {
        refusal: {
          status: "declined",
          errorType: "card.do-not-retry",
          message: `${DECLINES["card.do-not-retry"].message} (code ${block.code}, ${block.at}); set override_mac_blocking to try it anyway.`,
          advice: "do-not-retry",
        },
        notes: [`mastercard merchant advice code ${block.code} blocks retries`],
      };
    }
    notes.push(`mastercard merchant advice code ${block.code} overridden (override_mac_blocking)`);
  }
  if (card.scheme === "visa") {
    const since = now.getTime() - VISA_WINDOW_MS;
    const declines = [...(card.declined_at ?? []), ...options.declinedNow].filter(
      (at) => Date.parse(at) > since,
    ).length;
    if (declines > 0) {
      const reattempt = declines;
      if (reattempt > VISA_REATTEMPTS) {
        return {
          refusal: {
            status: "declined",
            errorType: "card.reattempt-limit",
            message: `${DECLINES["card.reattempt-limit"].message} This card was declined ${declines} times in the last 30 days.`,
          },
          notes: [`visa reattempt ${reattempt} of ${VISA_REATTEMPTS} in 30 days refused`],
        };
      }
      notes.push(`visa reattempt ${reattempt} of ${VISA_REATTEMPTS} in 30 days`);
    }
  }
  return { notes };
}

/** A decline's merchant advice code that blocks the card from now on; undefined for any other. */
export function blockingAdvice(decline: Pick<Declined, "merchantAdviceCode">): string | undefined {
  const code = decline.merchantAdviceCode;
  return code && BLOCKING_ADVICE_CODES.includes(code) ? code : undefined;
}
