/**
 * The one interface in front of every payment provider, for cards and native alternative payment
 * methods (APMs). Adding a provider is one module implementing it plus its entry in
 * `catalogue.ts`. Amounts are decimal strings in the major unit of `currency` (`shared/money.ts`);
 * a connector converts them to what its provider wants.
 *
 * How a connector answers, and what the payments core does with each answer:
 * - a value (approved, declined, customer action, the next step of an APM): the provider decided;
 *   it is settled as such;
 * - `OutcomeUnknown` thrown: the request may or may not have reached the provider (a timeout, a
 *   connection lost after sending). The operation stays reserved until `lookup` can tell;
 * - any other throw: the connector failed before or instead of an answer. The core asks `lookup`
 *   at once: what the provider recorded is settled, and an operation the provider never recorded
 *   is settled as failed. Only when `lookup` cannot answer either does the operation stay reserved.
 *
 * Every operation carries `reference`, our id of that one operation, the same on every attempt of
 * it: providers treat a repeated reference as the same operation (repeating a call whose answer was
 * lost never moves money twice), and `lookup(reference)` finds it again.
 *
 * Follow-up operations (capture, void, refund) address the payment by the `gatewayReference` the
 * connector returned when approving it; callers store it with the transaction and never interpret it.
 */
export interface PaymentConnector {
  /** Card payments; absent when the provider takes no cards. */
  card?: CardOperations;
  /** Native APM payments; absent when the provider offers none. */
  nativeApm?: NativeApmOperations;
  /**
   * Payouts to a card (an original credit: money goes to the cardholder); absent when the provider
   * cannot pay out to cards through this connector.
   */
  payout?(request: PayoutRequest): Promise<PayoutOutcome>;
  capture(request: FollowUpRequest): Promise<CaptureOutcome>;
  void(request: VoidRequest): Promise<OperationOutcome>;
  refund(request: FollowUpRequest): Promise<OperationOutcome>;
  /**
   * What the provider recorded for the operation made under `reference`; `not-found` when it never
   * received it (so it can be settled as not done). Throws when the provider cannot tell now.
   */
  lookup(request: LookupRequest): Promise<LookupOutcome>;
}

export interface CardOperations {
  authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome>;
  incrementAuthorization(request: FollowUpRequest): Promise<OperationOutcome>;
  /** A zero-amount check that the card exists and may be charged (customer token verification). */
  verifyCard(request: VerifyRequest): Promise<VerifyOutcome>;
  /**
   * 3-D Secure without a payment: the cardholder authenticates for `amount` (the same rounds as an
   * authorization's), and nothing is reserved with the issuer. The authentication is given back to
   * the payment's authorization (`ThreeDSContext.authenticated`). Absent when the provider cannot.
   */
  authenticate?(request: AuthorizeRequest): Promise<AuthenticateOutcome>;
  /**
   * What a stored-value card (a gift card) holds: its vouchers and the available total; `none` when
   * the card holds no balance with this provider. Absent when the provider tells no balances.
   */
  balance?(request: BalanceRequest): Promise<BalanceOutcome>;
}

/** A balance is asked with the card's public fields: no card number is opened to read one. */
export interface BalanceRequest extends ConnectorScope {
  card: { fingerprint: string; iin: string; last4: string };
}

export type BalanceOutcome =
  | { status: "none" }
  | {
      status: "balance";
      vouchers: { amount: string; currency: string; expiry: string | null }[];
      available: { amount: string; currency: string; expiry: string | null };
    };

/** A payout to a card: `amount` credited to the cardholder (an original credit transaction). */
export interface PayoutRequest extends ConnectorScope {
  /** Our id of this payout; the provider's idempotency reference. */
  reference: string;
  amount: string;
  currency: string;
  card: CardCredentials;
}

export type PayoutOutcome = { status: "approved"; gatewayReference: string } | Declined;

/** How a 3DS authentication without payment ended (see `CardOperations.authenticate`). */
export type AuthenticateOutcome =
  | {
      status: "authenticated";
      /** `not-applicable`: the issuer asked for no authentication (nothing to give the authorization). */
      threeDS: Exclude<ThreeDSStatus, "failed">;
      /** The provider's id of the authentication, which the authorization names. */
      authenticationReference: string;
    }
  | (Declined & { threeDS: ThreeDSStatus })
  | CustomerActionOutcome;

/**
 * A native APM payment runs in steps: each sends the values the customer gave for the parameters
 * the previous step asked for (the configuration's `native_apm_config` for the first), and the
 * provider asks for more (`customer-input`), accepts the payment for capture (`pending-capture`),
 * or refuses it.
 */
export interface NativeApmOperations {
  pay(request: NativePaymentRequest): Promise<NativePaymentOutcome>;
}

/** A value the customer must give, as `native_apm_config` and the API describe it. */
export interface NativeApmParameter {
  key: string;
  type: "numeric" | "text" | "email" | "phone" | "string";
  /** The exact length; null: any length. */
  length: number | null;
  required: boolean;
}

export interface NativePaymentRequest extends ConnectorScope {
  reference: string;
  amount: string;
  currency: string;
  /** `initial`: the first step; `customer-input`: the values the provider asked for. */
  step: "initial" | "customer-input";
  values: Record<string, string>;
}

export type NativePaymentOutcome =
  | { status: "customer-input"; parameters: NativeApmParameter[]; message: string }
  | { status: "pending-capture"; gatewayReference: string; message: string }
  | Declined;

/** The card connector part of a provider that takes cards (every card operation and follow-up). */
export type CardConnector = PaymentConnector & { card: CardOperations };

/**
 * Where an operation goes: the environment whose gateway configuration it uses. Providers keep
 * each merchant account's operations apart; so does the sandbox.
 */
export interface ConnectorScope {
  /** The environment project id. */
  scope: string;
}

/** The card as a connector needs it: the secrets opened by the card vault for this one call. */
export interface CardCredentials {
  number: string;
  expMonth: number;
  expYear: number;
  /** Only for the first authorization or verification; null afterwards (PCI DSS 3.3.1.2). */
  cvc: string | null;
  name: string | null;
  /** The card's keyed fingerprint: the same card gives the same value (never the number itself). */
  fingerprint: string;
}

/**
 * Why the payment is made: `customer` (the cardholder is present, CIT) or `merchant` (a renewal or
 * any server-side payment without the cardholder, MIT). Issuers may treat them differently.
 */
export type Initiator = "customer" | "merchant";

export interface AuthorizeRequest extends ConnectorScope {
  /** Our id of this authorization attempt; providers use it as their idempotency reference. */
  reference: string;
  amount: string;
  currency: string;
  card: CardCredentials;
  incremental: boolean;
  initiator: Initiator;
  /** The card scheme to route through (the card's, or a co-scheme the payer prefers). */
  scheme: string | null;
  threeDS: ThreeDSContext;
  /**
   * For a merchant-initiated payment: the scheme's id of the first customer-initiated payment (or
   * verification) with this card, which the provider sends with it.
   */
  networkTransactionId?: string | null;
}

/**
 * Where the cardholder authenticates (3-D Secure): in a `browser` with 3DS1 (a challenge page,
 * `customer_action` of type `url`), in a browser with 3DS2 (`browser-3ds2`: a hidden fingerprint
 * page, type `fingerprint`, then the challenge page), or in a mobile `app`'s 3DS2 SDK (types
 * `fingerprint-mobile` and `challenge-mobile`).
 */
export type ThreeDSChannel = "browser" | "browser-3ds2" | "app";

/** What the cardholder's browser or app answered to the previous 3DS round of this payment. */
export type ThreeDSRoundAnswer =
  | { kind: "challenge-page"; approved: boolean }
  | { kind: "fingerprint"; completed: boolean }
  | { kind: "challenge"; approved: boolean }
  /**
   * The cardholder came back from the provider's authentication page to our return address
   * (`/3ds/{token}/return`), with what the provider put in its query (Adyen's `redirectResult`).
   */
  | { kind: "provider-redirect"; params: Record<string, string> };

/** 3-D Secure around an authorization (or a verification, when the caller asks for it). */
export interface ThreeDSContext {
  channel: ThreeDSChannel;
  /** Our id of this payment's 3DS exchange (`threeDSServerTransID`). */
  serverTransactionId: string;
  /** Where the browser runs the 3DS method (`customer_action` of type `fingerprint`). */
  fingerprintUrl: string;
  /** Where the customer completes a challenge in a browser (`customer_action` of type `url`). */
  challengeUrl: string;
  /** Where a provider's authentication page sends the cardholder back to (round `provider-redirect`). */
  returnUrl: string;
  /** The answer to the previous round, when this attempt follows one. */
  answer?: ThreeDSRoundAnswer;
  /** What the connector kept with the round it asked for (its payment's id at the provider, say). */
  providerState?: Record<string, string>;
  /**
   * `required`: a routing rule asks the issuer to authenticate the cardholder even where it would
   * not (a customer-initiated payment only). `dropped`: a cascade after the cardholder authenticated
   * with another provider, which the request allowed to go on without liability shift
   * (`retry_drop_liability_shift`): no authentication is requested. Absent: the provider decides.
   */
  demand?: "required" | "dropped";
  /**
   * The cardholder was authenticated before, for this payment, by an authentication without payment
   * (`CardOperations.authenticate`) with this card and this configuration: the issuer is not asked
   * again, and the authorization keeps that authentication's result (and its liability shift).
   */
  authenticated?: { status: "frictionless" | "challenge-passed"; reference: string };
}

/**
 * What a customer action waits for: the challenge page's answer, the browser's or app's `gway_req_`,
 * or the cardholder's return from a provider's page.
 */
export type ThreeDSRound = "challenge-page" | "fingerprint" | "challenge" | "provider-redirect";

export interface FollowUpRequest extends ConnectorScope {
  gatewayReference: string;
  /** Our id of this operation (see the interface). */
  reference: string;
  amount: string;
  currency: string;
  /** The authorization as it stands before this operation (an increment's new total is it plus `amount`). */
  authorizedAmount: string;
  /** For a refund: our refund's id, which the provider keeps with it (its later failure names it). */
  refundId?: string;
}

export interface VoidRequest extends ConnectorScope {
  gatewayReference: string;
  reference: string;
}

export interface VerifyRequest extends ConnectorScope {
  reference: string;
  card: CardCredentials;
  /** The card scheme to route through (as for an authorization). */
  scheme?: string | null;
  /** Only when the caller runs 3DS for the verification (the shopper's browser or app). */
  threeDS?: ThreeDSContext;
}

export type OperationKind =
  | "authorization"
  | "capture"
  | "void"
  | "refund"
  | "increment"
  | "verification"
  | "native-payment"
  | "authentication"
  | "payout";

export interface LookupRequest extends ConnectorScope {
  kind: OperationKind;
  reference: string;
  /** The provider's reference of the payment a follow-up (capture, refund, …) was made on. */
  gatewayReference?: string | null;
  /**
   * For an authorization after a 3DS round at the provider: what the connector kept with that round
   * (`CustomerActionOutcome.providerState`): the payment at the provider was made by an earlier
   * attempt, under that attempt's reference.
   */
  providerState?: Record<string, string> | null;
}

/** The result of a CVC or AVS check. `unavailable` when nothing was sent to check. */
export type CheckResult = "passed" | "failed" | "unavailable";

export interface CheckResults {
  cvc: CheckResult;
  avs: CheckResult;
}

/** What a provider's answer tells of the checks when it tells nothing. */
export const NO_CHECKS: CheckResults = { cvc: "unavailable", avs: "unavailable" };

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

/** Why a provider said no: the API's `error_type`, from the one catalogue of decline codes. */
export type { DeclineType } from "./declines.ts";

/**
 * What the issuer advises about trying again: `do-not-retry` means the card will never be accepted
 * (a subscription's dunning stops at once).
 */
export type RetryAdvice = "retry" | "do-not-retry";

export interface Declined {
  status: "declined";
  errorType: import("./declines.ts").DeclineType;
  message: string;
  advice?: RetryAdvice;
  /**
   * A Mastercard decline's merchant advice code (`03`, `21`, …), when the provider reports one:
   * 03 and 21 forbid further attempts on the card (`shared/routing/scheme-rules.ts`).
   */
  merchantAdviceCode?: string;
}

export type AuthorizeOutcome =
  | {
      status: "approved";
      gatewayReference: string;
      checks: CheckResults;
      threeDS: ThreeDSStatus;
      /** The card scheme's id of this authorization: later merchant-initiated payments name it. */
      networkTransactionId?: string | null;
    }
  | (Declined & { checks: CheckResults; threeDS: ThreeDSStatus })
  | CustomerActionOutcome;

/** The issuer needs the cardholder: a 3DS round the browser or app must go through first. */
export interface CustomerActionOutcome {
  status: "customer-action";
  customerAction: CustomerAction;
  round: ThreeDSRound;
  threeDS: "challenge-required";
  /** Kept with the exchange and given back with the next attempt (`ThreeDSContext.providerState`). */
  providerState?: Record<string, string>;
}

/**
 * The provider accepted the request and decides later (Adyen's captures, cancels, refunds and
 * amount updates): its webhook says how it ended. The operation stays reserved meanwhile, held for
 * the provider (`awaitingProvider`), and `lookup` finds the decision once the webhook told it.
 */
export interface Received {
  status: "received";
}

/** `chargedBack`: the provider reports the captured payment as charged back by the cardholder. */
export type CaptureOutcome = { status: "approved"; chargedBack: boolean } | Declined | Received;

export type OperationOutcome = { status: "approved" } | Declined | Received;

export type VerifyOutcome =
  | { status: "approved"; gatewayReference: string; checks: CheckResults }
  | (Declined & { checks: CheckResults })
  | CustomerActionOutcome;

/** The outcome a connector returned for an operation, as `lookup` finds it again. */
export type RecordedOutcome =
  | AuthorizeOutcome
  | CaptureOutcome
  | OperationOutcome
  | VerifyOutcome
  | NativePaymentOutcome
  | AuthenticateOutcome
  | PayoutOutcome;

export type LookupOutcome = { status: "not-found" } | { status: "found"; outcome: RecordedOutcome };

/**
 * Thrown by a connector when the operation may or may not have happened (the provider's answer was
 * lost). Nothing may be concluded from it: the operation stays reserved until `lookup` can tell.
 */
export class OutcomeUnknown extends Error {
  override name = "OutcomeUnknown";
}

/**
 * Thrown by a connector when its request never reached the provider (connection refused, unknown
 * host): nothing can have happened, so the payments core settles the operation as not done (a
 * failed attempt that changes nothing) without asking the provider.
 */
export class ProviderUnreachable extends Error {
  override name = "ProviderUnreachable";
  constructor(
    message: string,
    /** Why nothing was done: the provider could not be reached, or refused the load (HTTP 429). */
    readonly errorType: "gateway.unavailable" | "gateway.rate-limited" = "gateway.unavailable",
  ) {
    super(message);
  }
}
