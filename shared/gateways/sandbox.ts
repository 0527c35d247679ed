import { amountProblemIn, isZeroAmount } from "../money.ts";
import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CaptureOutcome,
  CardConnector,
  CheckResults,
  Declined,
  DeclineType,
  FollowUpRequest,
  OperationOutcome,
  VerifyOutcome,
  VerifyRequest,
  VoidRequest,
} from "./connector.ts";

/**
 * The `sandbox` card connector: no provider behind it, outcomes decided by the card number, exactly
 * as the test-card table of the client reference lists them. Pure and deterministic. Any other
 * valid card number behaves as a success card. No expiry or CVC value is checked.
 *
 * CVC and AVS failures: a failed CVC check declines the authorization or verification
 * (`card.failed-cvc`, `card.failed-cvc-and-avs` when AVS fails too), as issuers decline a wrong
 * security code; a failed AVS check alone approves it with `avs: failed`, leaving the merchant to
 * decide. A CVC check can only fail when a CVC was sent: without one it is `unavailable`, and the
 * card is approved.
 *
 * 3-D Secure happens at authorization: the challenge card asks for a challenge (`customer_action`
 * of type `url`) until the customer's result is given. Verification runs no 3DS.
 *
 * The provider state of an authorization (what capture and refund of a test card do) is carried in
 * the gateway reference the connector returns: `sandbox.<follow-up behaviour>.<reference>`.
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
  | "do-not-honor"
  | "no-money";

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
  "4000000000002180": "do-not-honor",
  "4000000000002206": "no-money",
};

export function testCardBehaviour(number: string): TestCardBehaviour {
  return SANDBOX_TEST_CARDS[number] ?? "success";
}

/** What the follow-ups of an approved authorization do, carried in its gateway reference. */
type FollowUp = "normal" | "capture-fails" | "charged-back" | "refund-declined";

const REFERENCE_PREFIX = "sandbox";

function gatewayReference(followUp: FollowUp, reference: string): string {
  return `${REFERENCE_PREFIX}.${followUp}.${reference}`;
}

function followUpOf(reference: string): FollowUp {
  const [prefix, followUp] = reference.split(".");
  if (
    prefix !== REFERENCE_PREFIX ||
    (followUp !== "normal" &&
      followUp !== "capture-fails" &&
      followUp !== "charged-back" &&
      followUp !== "refund-declined")
  ) {
    throw new Error("Not a gateway reference of the sandbox connector");
  }
  return followUp;
}

function followUpFor(behaviour: TestCardBehaviour): FollowUp {
  return behaviour === "capture-fails" || behaviour === "charged-back" || behaviour === "refund-declined"
    ? behaviour
    : "normal";
}

const DECLINE_MESSAGES: Record<DeclineType, string> = {
  "card.declined": "The card was declined.",
  "card.do-not-honor": "The issuer declined the card: do not honor.",
  "card.no-money": "The card has insufficient funds.",
  "card.failed-cvc": "The card's security code (CVC) check failed.",
  "card.failed-cvc-and-avs": "The card's security code (CVC) and address (AVS) checks failed.",
  "card.failed-three-d-s": "3-D Secure authentication of the cardholder failed.",
  "gateway.declined": "The gateway declined the operation.",
};

function declined(errorType: DeclineType, message = DECLINE_MESSAGES[errorType]): Declined {
  return { status: "declined", errorType, message };
}

function checksFor(behaviour: TestCardBehaviour, cvcSent: boolean): CheckResults {
  const cvcFails = behaviour === "cvc-fails" || behaviour === "cvc-and-avs-fail";
  const avsFails = behaviour === "avs-fails" || behaviour === "cvc-and-avs-fail";
  return {
    cvc: !cvcSent ? "unavailable" : cvcFails ? "failed" : "passed",
    // No billing address is sent, so only the AVS test cards give a result.
    avs: avsFails ? "failed" : "unavailable",
  };
}

/** The card-level answer shared by authorization and verification, before 3DS. */
function cardDecision(behaviour: TestCardBehaviour, checks: CheckResults): Declined | undefined {
  if (behaviour === "declined") return declined("card.declined");
  if (behaviour === "do-not-honor") return declined("card.do-not-honor");
  if (behaviour === "no-money") return declined("card.no-money");
  if (checks.cvc === "failed") {
    return declined(checks.avs === "failed" ? "card.failed-cvc-and-avs" : "card.failed-cvc");
  }
  return undefined;
}

/** Amounts reach a connector validated: a bad one is a bug of the caller, not a decline. */
function checkAmount(amount: string, currency: string): void {
  const problem = amountProblemIn(amount, currency);
  if (problem) throw new RangeError(`The amount ${problem}`);
  if (isZeroAmount(amount)) throw new RangeError("The amount must be above zero");
}

export const sandboxConnector: CardConnector = {
  async authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
    checkAmount(request.amount, request.currency);
    const behaviour = testCardBehaviour(request.card.number);
    const checks = checksFor(behaviour, request.card.cvc !== null);
    const refusal = cardDecision(behaviour, checks);
    if (refusal) return { ...refusal, checks, threeDS: "not-applicable" };

    let threeDS: AuthorizeOutcome["threeDS"] = "not-applicable";
    if (behaviour === "three-d-s-fingerprint-fails") {
      return { ...declined("card.failed-three-d-s"), checks, threeDS: "failed" };
    }
    if (behaviour === "three-d-s-frictionless") threeDS = "frictionless";
    if (behaviour === "three-d-s-challenge") {
      const result = request.threeDS.challengeResult;
      if (result === undefined) {
        return {
          status: "customer-action",
          customerAction: { type: "url", value: request.threeDS.challengeUrl, metadata: {} },
          threeDS: "challenge-required",
        };
      }
      if (result === "failed") return { ...declined("card.failed-three-d-s"), checks, threeDS: "failed" };
      threeDS = "challenge-passed";
    }
    return {
      status: "approved",
      gatewayReference: gatewayReference(followUpFor(behaviour), request.reference),
      checks,
      threeDS,
    };
  },

  async capture(request: FollowUpRequest): Promise<CaptureOutcome> {
    checkAmount(request.amount, request.currency);
    const followUp = followUpOf(request.gatewayReference);
    if (followUp === "capture-fails") {
      return declined("gateway.declined", "The sandbox gateway declined the capture of this test card.");
    }
    return { status: "approved", chargedBack: followUp === "charged-back" };
  },

  async void(request: VoidRequest): Promise<OperationOutcome> {
    followUpOf(request.gatewayReference);
    return { status: "approved" };
  },

  async refund(request: FollowUpRequest): Promise<OperationOutcome> {
    checkAmount(request.amount, request.currency);
    if (followUpOf(request.gatewayReference) === "refund-declined") {
      return declined("gateway.declined", "The sandbox gateway declined the refund of this test card.");
    }
    return { status: "approved" };
  },

  async incrementAuthorization(request: FollowUpRequest): Promise<OperationOutcome> {
    checkAmount(request.amount, request.currency);
    followUpOf(request.gatewayReference);
    return { status: "approved" };
  },

  async verifyCard(request: VerifyRequest): Promise<VerifyOutcome> {
    const behaviour = testCardBehaviour(request.card.number);
    const checks = checksFor(behaviour, request.card.cvc !== null);
    const refusal = cardDecision(behaviour, checks);
    if (refusal) return { ...refusal, checks };
    return {
      status: "approved",
      gatewayReference: gatewayReference(followUpFor(behaviour), request.reference),
      checks,
    };
  },
};
