import type { DeclineType, PayoutOutcome, PayoutRequest } from "../connector.ts";
import { declined, gatewayReference, testCardBehaviour } from "./test-cards.ts";

/**
 * The sandbox's payouts to cards (original credits: money goes to the cardholder), decided by the
 * card number. A card that declines every payment (`4000000000000002`, the stolen, lost, expired, …
 * cards) declines a payout with the same code; two cards decline payouts only:
 *
 * - `4000000000005126`: the issuer does not accept credits to the card (`card.not-supported`);
 * - `4000000000005134`: the payout exceeds what the card may receive (`card.exceeded-limits`).
 *
 * Any other card is credited. The gateway reference of a payout is `sandbox.normal.<reference>`.
 */
export const PAYOUT_DECLINING_CARDS: Readonly<Record<string, DeclineType>> = {
  "4000000000005126": "card.not-supported",
  "4000000000005134": "card.exceeded-limits",
};

const PAYOUT_MESSAGES: Partial<Record<DeclineType, string>> = {
  "card.not-supported": "The card's issuer does not accept payouts to this card.",
  "card.exceeded-limits": "The payout exceeds what this card may receive.",
};

export function decidePayout(request: Pick<PayoutRequest, "card" | "reference">): PayoutOutcome {
  const payoutDecline = PAYOUT_DECLINING_CARDS[request.card.number];
  if (payoutDecline) return declined(payoutDecline, PAYOUT_MESSAGES[payoutDecline]);
  const behaviour = testCardBehaviour(request.card.number);
  if (behaviour === "declined") return declined("card.declined");
  if (typeof behaviour === "object" && "declines" in behaviour) return declined(behaviour.declines);
  return { status: "approved", gatewayReference: gatewayReference("normal", request.reference) };
}
