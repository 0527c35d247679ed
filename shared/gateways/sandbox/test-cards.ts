import type { CheckResults, Declined, DeclineType, RetryAdvice } from "../connector.ts";
import { DECLINES } from "../declines.ts";

/**
 * The sandbox's test cards: what each card number does, exactly as the test-card table of the
 * client reference (`../shared/reference/client-compatibility.md`) lists them, and the pure
 * decisions taken from them. Any other valid card number behaves as a success card. No expiry or
 * CVC value is checked.
 */
export type TestCardBehaviour =
  | "success"
  | "declined"
  | "capture-fails"
  | "cvc-fails"
  | "avs-fails"
  | "cvc-and-avs-fail"
  | "charged-back"
  | "refund-declined"
  | "three-d-s-challenge"
  | "three-d-s-frictionless"
  | "three-d-s-fingerprint-fails"
  | "sca-customer-initiated"
  | { declines: DeclineType }
  | "verification-only"
  | { firstUseOnly: DeclineType }
  | "increment-fails"
  | "increment-no-money"
  | "incremented-capture-fails"
  | "do-not-retry"
  | { merchantAdviceCode: "03" | "21" };

export const SANDBOX_TEST_CARDS: Readonly<Record<string, TestCardBehaviour>> = {
  "4242424242424242": "success",
  "5555555555554444": "success",
  "378282246310005": "success",
  "30123456789019": "success",
  "3530111333300000": "success",
  "6011111111111117": "success",
  "4000000000000002": "declined",
  "4000000000000010": "capture-fails",
  "4000000000000028": "cvc-fails",
  "4000000000000036": "avs-fails",
  "4000000000000044": "cvc-and-avs-fail",
  "4000000000000069": "charged-back",
  "4000000000000077": "refund-declined",
  "4000000000000101": "three-d-s-challenge",
  "4000000000003055": "three-d-s-frictionless",
  "4000000000003063": "three-d-s-frictionless",
  "4000000000003220": "three-d-s-fingerprint-fails",
  "4000000000003253": "sca-customer-initiated",
  "4000000000002180": { declines: "card.do-not-honor" },
  "4000000000002206": { declines: "card.no-money" },
  "4000000000002198": { declines: "card.possible-fraud" },
  "4000000000002214": { declines: "card.expired" },
  "4000000000002222": { declines: "card.stolen" },
  "4000000000002230": { declines: "card.failed-cvc" },
  "4000000000002248": { declines: "card.failed-avs" },
  "4000000000002255": { declines: "card.not-authorized" },
  "4000000000002263": { declines: "card.inactive" },
  "4000000000002271": { declines: "card.lost" },
  "4000000000002289": { declines: "card.region-not-authorized" },
  "4127969420587632": { declines: "card.blacklisted" },
  "4000000000001216": "verification-only",
  "4000000000006009": { firstUseOnly: "card.no-money" },
  "4000000000004301": { firstUseOnly: "card.expired" },
  "4000000000000531": "increment-fails",
  "4000000000003303": "increment-no-money",
  "4000000000006223": "incremented-capture-fails",
  "5337480000007168": "do-not-retry",
  // Mastercard declines whose merchant advice code forbids another attempt on the card.
  "5100000000000032": { merchantAdviceCode: "03" },
  "5100000000000024": { merchantAdviceCode: "21" },
  // Routing's card conditions (type and country from the IIN, `shared/cards/iin-table.ts`).
  "4000056655665556": "success",
  "5200828282828210": "success",
  "5105105105105100": "success",
  "4002760000000009": "success",
  "4002500000000009": "success",
  "4008260000000004": "success",
};

export function testCardBehaviour(number: string): TestCardBehaviour {
  return SANDBOX_TEST_CARDS[number] ?? "success";
}

export function declined(errorType: DeclineType, message: string = DECLINES[errorType].message): Declined {
  return { status: "declined", errorType, message };
}

export function checksFor(behaviour: TestCardBehaviour, cvcSent: boolean): CheckResults {
  const cvcFails = behaviour === "cvc-fails" || behaviour === "cvc-and-avs-fail";
  const avsFails = behaviour === "avs-fails" || behaviour === "cvc-and-avs-fail";
  return {
    cvc: !cvcSent ? "unavailable" : cvcFails ? "failed" : "passed",
    // No billing address is sent, so only the AVS test cards give a result.
    avs: avsFails ? "failed" : "unavailable",
  };
}

/** Whether the card's answer depends on the requests made with it before (the provider's memory). */
export function firstUseOnly(behaviour: TestCardBehaviour): DeclineType | undefined {
  return typeof behaviour === "object" && "firstUseOnly" in behaviour ? behaviour.firstUseOnly : undefined;
}

/**
 * The card-level answer shared by authorization and verification, before 3DS. `laterUse`: the
 * request is not the first one made with this card (for the cards that only accept their first).
 */
export function cardDecision(
  behaviour: TestCardBehaviour,
  checks: CheckResults,
  request: { kind: "authorization" | "verification"; laterUse: boolean },
): Declined | undefined {
  if (behaviour === "declined") return declined("card.declined");
  if (typeof behaviour === "object" && "declines" in behaviour) return declined(behaviour.declines);
  // Only payments: the card can still be verified, so a subscription can be set up with it.
  if (behaviour === "do-not-retry" && request.kind === "authorization") {
    return {
      ...declined("card.declined", "The issuer declined the card and advises not to try it again."),
      advice: "do-not-retry" satisfies RetryAdvice,
    };
  }
  if (
    typeof behaviour === "object" &&
    "merchantAdviceCode" in behaviour &&
    request.kind === "authorization"
  ) {
    const code = behaviour.merchantAdviceCode;
    return {
      ...declined(
        "card.do-not-honor",
        `The issuer declined the card with merchant advice code ${code}: ${code === "03" ? "do not try again" : "payment cancelled"}.`,
      ),
      advice: "do-not-retry" satisfies RetryAdvice,
      merchantAdviceCode: code,
    };
  }
  if (behaviour === "verification-only" && request.kind === "authorization") {
    return declined("card.declined", "The card can be verified but not charged.");
  }
  const laterDecline = firstUseOnly(behaviour);
  if (laterDecline && request.laterUse && request.kind === "authorization") return declined(laterDecline);
  if (checks.cvc === "failed") {
    return declined(checks.avs === "failed" ? "card.failed-cvc-and-avs" : "card.failed-cvc");
  }
  return undefined;
}

/** What the follow-ups of an approved authorization do, carried in its gateway reference. */
export type FollowUp =
  | "normal"
  | "capture-fails"
  | "charged-back"
  | "refund-declined"
  | "increment-fails"
  | "increment-no-money"
  | "incremented-capture-fails";

const FOLLOW_UPS: readonly FollowUp[] = [
  "normal",
  "capture-fails",
  "charged-back",
  "refund-declined",
  "increment-fails",
  "increment-no-money",
  "incremented-capture-fails",
];

export function followUpFor(behaviour: TestCardBehaviour): FollowUp {
  return typeof behaviour === "string" && (FOLLOW_UPS as readonly string[]).includes(behaviour)
    ? (behaviour as FollowUp)
    : "normal";
}

const REFERENCE_PREFIX = "sandbox";

/** `sandbox.<follow-up behaviour>.<authorization reference>`. */
export function gatewayReference(followUp: FollowUp, reference: string): string {
  return `${REFERENCE_PREFIX}.${followUp}.${reference}`;
}

export function parseGatewayReference(reference: string): { followUp: FollowUp; authorization: string } {
  const [prefix, followUp, authorization] = reference.split(".");
  if (
    prefix !== REFERENCE_PREFIX ||
    !(FOLLOW_UPS as readonly string[]).includes(followUp ?? "") ||
    !authorization
  ) {
    throw new Error("Not a gateway reference of the sandbox connector");
  }
  return { followUp: followUp as FollowUp, authorization };
}
