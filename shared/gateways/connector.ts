/**
 * The one interface in front of every payment provider for cards. Amounts are decimal strings in
 * the major unit of `currency` (`shared/money.ts`); a connector converts them to what its provider
 * wants. Every outcome is a value, never an exception: an exception means the provider could not be
 * reached or answered nonsense (a fault, retried by the caller), not that it said no.
 *
 * Follow-up operations (capture, void, refund, increment) address the authorization by the
 * `gatewayReference` the connector returned when approving it; callers store it with the
 * transaction and never interpret it.
 */
export interface CardConnector {
  authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome>;
  capture(request: FollowUpRequest): Promise<CaptureOutcome>;
  void(request: VoidRequest): Promise<OperationOutcome>;
  refund(request: FollowUpRequest): Promise<OperationOutcome>;
  incrementAuthorization(request: FollowUpRequest): Promise<OperationOutcome>;
  /** A zero-amount check that the card exists and may be charged (customer token verification). */
  verifyCard(request: VerifyRequest): Promise<VerifyOutcome>;
}

/** The card as a connector needs it: the secrets opened by the card vault for this one call. */
export interface CardCredentials {
  number: string;
  expMonth: number;
  expYear: number;
  /** Only for the first authorization or verification; null afterwards (PCI DSS 3.3.1.2). */
  cvc: string | null;
  name: string | null;
}

export interface AuthorizeRequest {
  /** Our id of the operation (the transaction); providers use it as their idempotency reference. */
  reference: string;
  amount: string;
  currency: string;
  card: CardCredentials;
  incremental: boolean;
  threeDS: ThreeDSContext;
}

/** 3-D Secure around an authorization. */
export interface ThreeDSContext {
  /** Where the customer completes a challenge the issuer asks for (`customer_action` of type `url`). */
  challengeUrl: string;
  /** The customer's answer to a challenge of this payment, once they went through it. */
  challengeResult?: "approved" | "failed";
}

export interface FollowUpRequest {
  gatewayReference: string;
  /**
   * Our id of this operation, the same on every attempt of it: providers use it as their idempotency
   * reference, so that repeating a call whose answer was lost does not move money twice.
   */
  reference?: string;
  amount: string;
  currency: string;
}

export interface VoidRequest {
  gatewayReference: string;
  /** As `FollowUpRequest.reference`. */
  reference?: string;
}

export interface VerifyRequest {
  reference: string;
  card: CardCredentials;
}

/** The result of a CVC or AVS check. `unavailable` when nothing was sent to check. */
export type CheckResult = "passed" | "failed" | "unavailable";

export interface CheckResults {
  cvc: CheckResult;
  avs: CheckResult;
}

/**
 * `not-applicable`: no 3DS took place. `frictionless`: the issuer authenticated the cardholder
 * without a challenge. `challenge-passed` / `failed`: authentication succeeded after a challenge,
 * or failed (challenge refused, or the device fingerprint step failed).
 */
export type ThreeDSStatus = "not-applicable" | "frictionless" | "challenge-passed" | "failed";

/** What the customer must do before the payment can go on (the API's `customer_action`). */
export interface CustomerAction {
  type: "url" | "redirect" | "fingerprint" | "fingerprint-mobile" | "challenge-mobile";
  value: string;
  metadata: Record<string, string>;
}

/** Why a provider said no: the API's `error_type`. */
export type DeclineType =
  | "card.declined"
  | "card.do-not-honor"
  | "card.no-money"
  | "card.failed-cvc"
  | "card.failed-cvc-and-avs"
  | "card.failed-three-d-s"
  | "gateway.declined";

export interface Declined {
  status: "declined";
  errorType: DeclineType;
  message: string;
}

export type AuthorizeOutcome =
  | { status: "approved"; gatewayReference: string; checks: CheckResults; threeDS: ThreeDSStatus }
  | (Declined & { checks: CheckResults; threeDS: ThreeDSStatus })
  | { status: "customer-action"; customerAction: CustomerAction; threeDS: "challenge-required" };

/** `chargedBack`: the provider reports the captured payment as charged back by the cardholder. */
export type CaptureOutcome = { status: "approved"; chargedBack: boolean } | Declined;

export type OperationOutcome = { status: "approved" } | Declined;

export type VerifyOutcome =
  | { status: "approved"; gatewayReference: string; checks: CheckResults }
  | (Declined & { checks: CheckResults });
