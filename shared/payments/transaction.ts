import { clock } from "../clock.ts";
import type {
  CustomerAction,
  Declined,
  NativeApmParameter,
  ThreeDSChannel,
  ThreeDSRound,
  ThreeDSRoundAnswer,
} from "../gateways/connector.ts";
import { isSoftDecline } from "../gateways/declines.ts";
import { newId, sharedUlidId } from "../ids.ts";
import {
  addAmounts,
  compareAmounts,
  fromMinorUnits,
  isZeroAmount,
  subtractAmounts,
  toMinorUnits,
  zeroIn,
} from "../money.ts";
import type { RoutingExplanation } from "../routing/decide.ts";
import {
  attemptOf,
  openRound as openRoundOf,
  roundAsked,
  type ThreeDSAttempt,
  type ThreeDSExchange,
} from "../three-d-s/exchange.ts";

/**
 * A transaction: the one payment of an invoice, with its state machine. Pure: the store writes what
 * these functions return, each transition on the condition that the transaction is still in the
 * state (status + version) it was read in.
 *
 * States (`status`) and what moves them:
 *
 *   (none) ──authorize: reserve──▶ waiting+pending(authorization)
 *   waiting+pending(authorization) ──approved──▶ authorized
 *                                  ──3DS round asked──▶ waiting (3DS round open)
 *                                  ──declined──▶ failed
 *   waiting (3DS round answered) ──authorize again: reserve──▶ waiting+pending(authorization)
 *
 * A 3DS round is the customer action the issuer asks for (a fingerprint, then maybe a challenge):
 * answered on the sandbox's challenge page, or by the browser or app sending a `gway_req_` source,
 * which is recorded in the same write that reserves the next authorization attempt.
 *   authorized ──capture (within 7 days)──▶ completed        ──capture declined──▶ failed
 *   authorized ──void──▶ voided
 *   authorized ──increment_authorization──▶ authorized (amount raised)
 *   completed ──refund (partial)──▶ completed (refunded = true)
 *   completed ──refund (the rest)──▶ refunded
 *
 * A native APM payment (no card; `payment_method` `native-apm`) moves through the provider's steps:
 *
 *   (none) ──native payment: reserve──▶ waiting+pending(native-payment)
 *   waiting+pending(native-payment) ──more input asked──▶ waiting (native_apm CUSTOMER_INPUT)
 *                                   ──confirmed──▶ pending (native_apm PENDING_CAPTURE)
 *                                   ──refused──▶ waiting (a failed attempt: the customer tries again)
 *   pending ──capture──▶ completed, then refunds as above
 *
 * Every provider call happens between two writes: a reservation (`pending`, a leased claim of the
 * transaction for one operation, taken by a conditional write so two requests can never both call
 * the provider for the same step) and its settlement (which clears `pending`). A reservation whose
 * lease ran out (its holder crashed) is taken over by the next request, which repeats the provider
 * call with the same operation reference (providers treat a repeated reference as the same
 * operation) and settles it.
 */
export type TransactionStatus =
  | "waiting"
  | "pending"
  | "authorized"
  | "completed"
  | "failed"
  | "voided"
  | "refunded";

export type PaymentMethod = "card" | "native-apm";

/** Where a native APM payment stands, as the API's `native_apm.state` names it. */
export interface NativeApmState {
  state: "CUSTOMER_INPUT" | "PENDING_CAPTURE";
  /** What the provider asks the customer for next (CUSTOMER_INPUT); null once nothing is asked. */
  parameters: NativeApmParameter[] | null;
  message: string;
}

export type OperationType =
  | "request"
  | "three_d_s_check"
  | "authorization"
  | "capture"
  | "void"
  | "refund"
  | "payout";

export interface Operation {
  id: string;
  type: OperationType;
  amount: string;
  success: boolean;
  error_code: string | null;
  created_at: string;
  /**
   * Kept, not presented: the `Idempotency-Key` of the request that reserved a capture, so its retry
   * gets the capture as its answer even when the recovery job settled it (`capturedFor`).
   */
  request_key?: string | null;
}

export type RefundReason = "customer_request" | "duplicate" | "fraud";

export interface Refund {
  id: string;
  transaction_id: string;
  amount: string;
  reason: RefundReason | null;
  information: string | null;
  has_failed: boolean;
  metadata: Record<string, string>;
  sandbox: boolean;
  created_at: string;
}

export type PendingType =
  | "authorization"
  | "native-payment"
  | "capture"
  | "void"
  | "refund"
  | "increment"
  /** 3-D Secure without a payment (`authenticate.ts`): nothing is reserved with the issuer. */
  | "authentication"
  /** A payout to the card (`payout.ts`). */
  | "payout";

/** A reserved provider call: who may make it until when, and with which reference. */
export interface PendingOperation {
  /** The operation reference given to the provider: the same on every attempt of this operation. */
  id: string;
  type: PendingType;
  amount: string;
  /** The `Idempotency-Key` of the request that reserved it: its retry may finish it as its own. */
  request_key: string | null;
  /** Epoch milliseconds after which another request may take the operation over. */
  lease_until: number;
  /** For a refund: the refund it records. */
  refund: Refund | null;
  /**
   * For an authorization: the 3DS exchange offered to the connector, should the issuer need the
   * cardholder (the open exchange's own on a later round).
   */
  three_d_s?: ThreeDSAttempt | null;
  /**
   * For an authorization: the capture chained to it (a capture with a source), made under the same
   * reservation right after an approval and settled in the same write. Its reference is fixed here,
   * so whoever settles an abandoned reservation can ask the provider about both operations.
   */
  chained_capture?: ChainedCapture | null;
  /**
   * Set when the provider received the operation and decides later (`Received`): its webhook
   * settles it, which may take the reservation over at any time; meanwhile it is held for the
   * provider (`PROVIDER_DECISION_LEASE_MS`), then the recovery job asks again.
   */
  awaiting_provider_since?: string | null;
  /**
   * For an authorization: what it asks of 3DS (`ThreeDSContext.demand`): `required` by a routing
   * rule, `dropped` on a cascade after the cardholder authenticated with another provider.
   */
  three_d_s_demand?: "required" | "dropped" | null;
}

/**
 * One provider attempt of a card payment's authorization: where it went, how it ended, how long it
 * took. A cascade makes several; each is kept, in order.
 */
export interface AuthorizationAttempt {
  /** The operation reference the provider was given. */
  reference: string;
  gateway_configuration_id: string;
  gateway_name: string;
  /** `not-done`: the provider failed or could not be reached, and recorded nothing. */
  outcome: "approved" | "declined" | "not-done" | "customer-action";
  error_code: string | null;
  /** A decline's class in the catalogue (`shared/gateways/declines.ts`). */
  decline: "soft" | "hard" | null;
  merchant_advice_code: string | null;
  /** Null when the outcome was learnt later (a lost answer settled from the provider's record). */
  duration_ms: number | null;
  /** Whether the next configuration of the chain was tried after it, or why not. */
  cascade: string | null;
  at: string;
  /** An approval learnt after another provider approved the payment: voided at once. */
  voided_extra_at?: string | null;
}

/** A capture chained to an authorization's reservation: its reference and the amount it captures. */
export interface ChainedCapture {
  id: string;
  type: "capture";
  amount: string;
}

/** `pending` while a 3DS round is open; otherwise what the connector reported. */
export type ThreeDSStatus = "not-applicable" | "pending" | "frictionless" | "challenge-passed" | "failed";

export interface TransactionRecord {
  id: string;
  project_id: string;
  invoice_id: string;
  customer_id: string | null;
  subscription_id: string | null;
  token_id: string | null;
  /** The card paid with; null for a native APM payment. */
  card_id: string | null;
  /** `card` unless set (transactions of before native APMs are card payments). */
  payment_method?: PaymentMethod;
  /** A native APM payment's state; null (or absent) for a card payment or before the first step. */
  native_apm?: NativeApmState | null;
  gateway_configuration_id: string;
  gateway_name: string;
  name: string;
  amount: string;
  currency: string;
  authorized_amount: string;
  captured_amount: string;
  refunded_amount: string;
  voided_amount: string;
  status: TransactionStatus;
  chargedback: boolean;
  three_d_s_status: ThreeDSStatus;
  error_code: string | null;
  error_message: string | null;
  /** The issuer's advice with a decline: `do-not-retry` stops a subscription's dunning at once. */
  retry_advice?: "do-not-retry" | null;
  /** Whether the authorization was requested with `incremental=true`. */
  incremental: boolean;
  auto_capture_at: string | null;
  /** What the automatic capture captures (`capture_amount`); null: all that is authorized. */
  auto_capture_amount?: string | null;
  gateway_reference: string | null;
  authorized_at: string | null;
  operations: Operation[];
  refunds: Refund[];
  /** The 3DS exchange, once the issuer asked for the cardholder (kept after it ends). */
  authentication: ThreeDSExchange | null;
  pending: PendingOperation | null;
  /**
   * The amount a capture with a source asked to capture, kept while the cardholder authenticates:
   * the request that completes the payment after the 3DS round (often the shopper's browser, whose
   * public key sends no `amount`) captures that amount, not the whole invoice.
   */
  requested_capture_amount?: string | null;
  metadata: Record<string, string>;
  sandbox: boolean;
  created_at: string;
  /** The card payment's provider attempts, in order (absent before routing kept them). */
  attempts?: AuthorizationAttempt[];
  /** Why the payment went where it went (absent before routing kept it). */
  routing?: RoutingExplanation | null;
  /** `payout`: money paid to the card (`payout.ts`); absent: a payment. */
  kind?: "payment" | "payout";
  /**
   * The cardholder's authentication without payment (`authenticate.ts`), once it succeeded: the
   * authorization that follows with the same card and configuration keeps it (no new challenge).
   */
  authenticated?: AuthenticatedCardholder | null;
}

/** An authentication without payment that succeeded, with what it was made with. */
export interface AuthenticatedCardholder {
  /** `not-applicable`: the issuer asked for no authentication (nothing for the authorization to keep). */
  status: "frictionless" | "challenge-passed" | "not-applicable";
  /** The provider's id of the authentication. */
  reference: string;
  gateway_configuration_id: string;
  card_id: string | null;
  token_id: string | null;
  at: string;
}

/** Capturing an authorization is allowed for 7 days after it. */
export const CAPTURE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * Longer than any function runs (29 s at most): past it, the holder of a reservation is known to be
 * gone. 60 s, unless `OPERATION_LEASE_MS` says otherwise: a test of the local stack shortens it (with
 * `RECURRING_JOB_INTERVAL_MS`) to see a crash recovered in seconds; no deployment sets it.
 */
export const OPERATION_LEASE_MS = leaseSetting(process.env.OPERATION_LEASE_MS);

function leaseSetting(configured: string | undefined): number {
  const value = Number(configured);
  return configured && Number.isInteger(value) && value >= 1_000 ? value : 60_000;
}

export interface NewTransaction {
  projectId: string;
  sandbox: boolean;
  invoice: {
    id: string;
    name: string;
    amount: string;
    currency: string;
    customer_id: string | null;
    subscription_id?: string | null;
  };
  source: { cardId: string | null; tokenId: string | null };
  paymentMethod: PaymentMethod;
  gateway: { configurationId: string; name: string };
  incremental: boolean;
  autoCaptureAt: string | null;
  autoCaptureAmount: string | null;
  metadata: Record<string, string>;
  requestKey: string | null;
  /** Where the cardholder would authenticate, should the issuer ask (card payments). */
  channel?: ThreeDSChannel;
  /** The amount of a capture chained to the first authorization (a capture with a source). */
  thenCapture?: string;
  /** A card payment's route. */
  routing?: RoutingExplanation;
}

/** A new transaction, reserved for its first authorization. */
export function newTransaction(input: NewTransaction, now: Date): TransactionRecord {
  const at = now.toISOString();
  const zero = zeroIn(input.invoice.currency);
  const record: TransactionRecord = {
    // One per invoice, named after it (`sharedUlidId`): read with the invoice in one round trip.
    id: sharedUlidId("transaction", input.invoice.id),
    project_id: input.projectId,
    invoice_id: input.invoice.id,
    customer_id: input.invoice.customer_id,
    subscription_id: input.invoice.subscription_id ?? null,
    token_id: input.source.tokenId,
    card_id: input.source.cardId,
    payment_method: input.paymentMethod,
    native_apm: null,
    gateway_configuration_id: input.gateway.configurationId,
    gateway_name: input.gateway.name,
    name: input.invoice.name,
    amount: input.invoice.amount,
    currency: input.invoice.currency,
    authorized_amount: zero,
    captured_amount: zero,
    refunded_amount: zero,
    voided_amount: zero,
    status: "waiting",
    chargedback: false,
    three_d_s_status: "not-applicable",
    error_code: null,
    error_message: null,
    incremental: input.incremental,
    auto_capture_at: input.autoCaptureAt,
    auto_capture_amount: input.autoCaptureAmount,
    gateway_reference: null,
    authorized_at: null,
    operations: [operation("request", input.invoice.amount, true, null, now)],
    refunds: [],
    authentication: null,
    pending: null,
    metadata: input.metadata,
    sandbox: input.sandbox,
    created_at: at,
    attempts: [],
    routing: input.routing ?? null,
  };
  const first: PendingType = input.paymentMethod === "native-apm" ? "native-payment" : "authorization";
  return reserved(record, first, input.invoice.amount, input.requestKey, {
    ...(input.channel ? { channel: input.channel } : {}),
    ...(input.thenCapture === undefined ? {} : { thenCapture: input.thenCapture }),
    ...(input.routing?.require_three_d_s ? { demand: "required" as const } : {}),
  });
}

export function paymentMethodOf(record: TransactionRecord): PaymentMethod {
  return record.payment_method ?? "card";
}

export function operation(
  type: OperationType,
  amount: string,
  success: boolean,
  errorCode: string | null,
  now: Date,
): Operation {
  return {
    id: newId("operation"),
    type,
    amount,
    success,
    error_code: errorCode,
    created_at: now.toISOString(),
  };
}

export function reserved(
  record: TransactionRecord,
  type: PendingType,
  amount: string,
  requestKey: string | null,
  extra: {
    refund?: Refund;
    channel?: ThreeDSChannel;
    thenCapture?: string;
    id?: string;
    demand?: "required" | "dropped";
  } = {},
): TransactionRecord {
  return {
    ...record,
    pending: {
      id: extra.id ?? newId("operation"),
      type,
      amount,
      request_key: requestKey,
      lease_until: leaseFromNow(),
      refund: extra.refund ?? null,
      three_d_s:
        type === "authorization" || type === "authentication"
          ? attemptOf(record.authentication, extra.channel ?? "browser")
          : null,
      ...(extra.thenCapture === undefined
        ? {}
        : { chained_capture: { id: newId("operation"), type: "capture", amount: extra.thenCapture } }),
      ...(extra.demand ? { three_d_s_demand: extra.demand } : {}),
    },
  };
}

/** The attempt an authorization's outcome makes (`outcome` undefined: nothing was done). */
export function providerAttemptOf(
  record: TransactionRecord,
  outcome: { status: string; errorType?: string; merchantAdviceCode?: string } | { notDone: Declined },
  durationMs: number | null,
  now: Date,
): AuthorizationAttempt {
  const pending = record.pending;
  if (!pending) throw new Error(`Transaction ${record.id} has no reserved operation`);
  const notDone = "notDone" in outcome;
  const errorType = notDone ? outcome.notDone.errorType : (outcome.errorType ?? null);
  const status = notDone ? "not-done" : outcome.status;
  return {
    reference: pending.id,
    gateway_configuration_id: record.gateway_configuration_id,
    gateway_name: record.gateway_name,
    outcome:
      status === "approved" || status === "declined" || status === "customer-action" ? status : "not-done",
    error_code: errorType,
    decline: status === "declined" && errorType ? (isSoftDecline(errorType) ? "soft" : "hard") : null,
    merchant_advice_code: (!notDone && outcome.merchantAdviceCode) || null,
    duration_ms: durationMs === null ? null : Math.round(durationMs),
    cascade: null,
    at: now.toISOString(),
  };
}

/** The transaction with an attempt recorded (once per reference: a repeat replaces it). */
export function withAttempt(record: TransactionRecord, attempt: AuthorizationAttempt): TransactionRecord {
  const others = (record.attempts ?? []).filter((kept) => kept.reference !== attempt.reference);
  return { ...record, attempts: [...others, attempt] };
}

/**
 * A cascade: the held authorization ended without moving money (a soft decline, or nothing done),
 * and the payment moves to the next configuration of its chain, reserved for a new authorization
 * there (a new reference), in the same write that records the attempt. The request goes on.
 */
export function cascaded(
  record: TransactionRecord,
  attempt: AuthorizationAttempt,
  failure: { errorType: string; message: string },
  next: { configurationId: string; name: string; demand?: "required" | "dropped" },
  now: Date,
): TransactionRecord {
  const pending = record.pending;
  if (!pending) throw new Error(`Transaction ${record.id} has no reserved operation`);
  const moved: TransactionRecord = {
    ...withAttempt(failedAttempt(record, failure, now), attempt),
    gateway_configuration_id: next.configurationId,
    gateway_name: next.name,
  };
  return reserved(moved, "authorization", pending.amount, pending.request_key, {
    channel: pending.three_d_s?.channel ?? "browser",
    ...(pending.chained_capture ? { thenCapture: pending.chained_capture.amount } : {}),
    ...(next.demand ? { demand: next.demand } : {}),
  });
}

/**
 * An authorization just settled as authorized, held for the capture its reservation chained (same
 * reference, same request), which is then settled as any capture is.
 */
export function chainedCaptureOf(authorized: TransactionRecord, held: PendingOperation): TransactionRecord {
  if (!held.chained_capture) throw new Error(`The authorization of ${authorized.id} chains no capture`);
  return reserved(authorized, "capture", held.chained_capture.amount, held.request_key, {
    id: held.chained_capture.id,
  });
}

/**
 * When the automatic capture of an authorization may run: at `auto_capture_at`, if it was asked for.
 * The job checks it, so a schedule that fires early or for another transaction captures nothing.
 */
export function autoCaptureDue(record: TransactionRecord, now: Date): boolean | "not-requested" {
  if (record.auto_capture_at === null) return "not-requested";
  return Date.parse(record.auto_capture_at) <= now.getTime();
}

/** A reservation whose holder is gone, claimed again (same operation, same reference) with a new lease. */
export function takenOver(record: TransactionRecord): TransactionRecord {
  if (!record.pending) throw new Error(`Transaction ${record.id} has no reserved operation to take over`);
  // Taken by one settler: no other may take it while this one works (an operation held for the
  // provider is held again, for the provider, if the provider cannot tell yet).
  return {
    ...record,
    pending: { ...record.pending, lease_until: leaseFromNow(), awaiting_provider_since: null },
  };
}

/**
 * Leases are about the processes that hold them, not business time: they run on real time
 * (`clock.now()`), whatever a sandbox environment's clock says.
 */
function leaseFromNow(): number {
  return clock.now().getTime() + OPERATION_LEASE_MS;
}

export function leaseExpired(pending: PendingOperation): boolean {
  return pending.lease_until < clock.now().getTime();
}

/**
 * How long an operation the provider received waits for its webhook before the recovery job asks
 * the provider's record (Adyen decides captures within minutes, at worst hours).
 */
export const PROVIDER_DECISION_LEASE_MS = 6 * 3600 * 1000;

/** The provider received the operation and decides later: it stays reserved, held for the provider. */
export function awaitingProvider(record: TransactionRecord, now: Date): TransactionRecord {
  const pending = record.pending;
  if (!pending) throw new Error(`Transaction ${record.id} has no reserved operation`);
  return {
    ...record,
    pending: {
      ...pending,
      lease_until: clock.now().getTime() + PROVIDER_DECISION_LEASE_MS,
      awaiting_provider_since: pending.awaiting_provider_since ?? now.toISOString(),
    },
  };
}

function settled(record: TransactionRecord): TransactionRecord {
  return { ...record, pending: null };
}

/**
 * The connector failed and the provider has no record of the operation: nothing happened, and the
 * failed attempt is recorded (operation and error) while the transaction keeps its state, so the
 * operation can be tried again.
 */
export function failedAttempt(
  record: TransactionRecord,
  failure: { errorType: string; message: string },
  now: Date,
): TransactionRecord {
  const pending = record.pending;
  if (!pending) throw new Error(`Transaction ${record.id} has no reserved operation`);
  return {
    ...settled(record),
    error_code: failure.errorType,
    error_message: failure.message,
    operations: [
      ...record.operations,
      operation(operationTypeOf(pending.type), pending.amount, false, failure.errorType, now),
    ],
  };
}

/**
 * Increments and native APM steps are authorizations of the payment's amount, for the record; an
 * authentication without payment is a 3DS check.
 */
function operationTypeOf(type: PendingType): OperationType {
  if (type === "authentication") return "three_d_s_check";
  return type === "increment" || type === "native-payment" ? "authorization" : type;
}

/** The provider asks the customer for more (a native APM's CUSTOMER_INPUT). */
export function awaitingCustomerInput(
  record: TransactionRecord,
  parameters: NativeApmParameter[],
  message: string,
  now: Date,
): TransactionRecord {
  return {
    ...settled(record),
    status: "waiting",
    native_apm: { state: "CUSTOMER_INPUT", parameters, message },
    error_code: null,
    error_message: null,
    operations: [...record.operations, operation("request", record.amount, true, null, now)],
  };
}

/**
 * The provider confirmed the native APM payment: its amount is promised and awaits the capture
 * (PENDING_CAPTURE). The capture window of card authorizations does not apply.
 */
export function pendingCapture(
  record: TransactionRecord,
  gatewayReference: string,
  message: string,
  now: Date,
): TransactionRecord {
  return {
    ...settled(record),
    status: "pending",
    authorized_amount: record.amount,
    gateway_reference: gatewayReference,
    native_apm: { state: "PENDING_CAPTURE", parameters: null, message },
    error_code: null,
    error_message: null,
    operations: [...record.operations, operation("authorization", record.amount, true, null, now)],
  };
}

export function authorizedWith(
  record: TransactionRecord,
  gatewayReference: string,
  threeDS: ThreeDSStatus,
  now: Date,
): TransactionRecord {
  const amount = record.pending?.amount ?? record.amount;
  return {
    ...settled(record),
    status: "authorized",
    authorized_amount: amount,
    gateway_reference: gatewayReference,
    three_d_s_status: threeDS,
    authorized_at: now.toISOString(),
    error_code: null,
    error_message: null,
    operations: [
      ...record.operations,
      ...threeDSCheck(record, threeDS, now),
      operation("authorization", amount, true, null, now),
    ],
  };
}

function threeDSCheck(record: TransactionRecord, threeDS: ThreeDSStatus, now: Date): Operation[] {
  if (threeDS === "not-applicable") return [];
  return [
    operation(
      "three_d_s_check",
      record.amount,
      threeDS !== "failed",
      threeDS === "failed" ? "card.failed-three-d-s" : null,
      now,
    ),
  ];
}

/**
 * The issuer needs the cardholder: the transaction waits for the answer to this round (each round
 * asked is recorded as a `three_d_s_check` operation; the last one as the authorization settles).
 */
export function awaitingCustomer(
  record: TransactionRecord,
  round: ThreeDSRound,
  action: CustomerAction,
  now: Date,
  providerState?: Record<string, string>,
): TransactionRecord {
  const attempt = record.pending?.three_d_s;
  if (!attempt) throw new Error(`Authorization of ${record.id} was reserved without a 3DS exchange`);
  return {
    ...settled(record),
    status: "waiting",
    three_d_s_status: "pending",
    requested_capture_amount:
      record.pending?.chained_capture?.amount ?? record.requested_capture_amount ?? null,
    authentication: roundAsked(record.authentication, attempt, round, action, providerState),
    operations: [...record.operations, operation("three_d_s_check", record.amount, true, null, now)],
  };
}

/** The answer to the current 3DS round, recorded for the next authorization attempt. */
export function threeDSAnswered(record: TransactionRecord, answer: ThreeDSRoundAnswer): TransactionRecord {
  if (!record.authentication) throw new Error(`Transaction ${record.id} has no 3DS exchange`);
  return { ...record, authentication: { ...record.authentication, answer } };
}

export function authorizationDeclined(
  record: TransactionRecord,
  decline: { errorType: string; message: string; advice?: "retry" | "do-not-retry" },
  threeDS: ThreeDSStatus,
  now: Date,
): TransactionRecord {
  return {
    ...settled(record),
    status: "failed",
    three_d_s_status: threeDS,
    error_code: decline.errorType,
    error_message: decline.message,
    retry_advice: decline.advice === "do-not-retry" ? "do-not-retry" : null,
    operations: [
      ...record.operations,
      ...threeDSCheck(record, threeDS, now),
      operation("authorization", record.pending?.amount ?? record.amount, false, decline.errorType, now),
    ],
  };
}

export function capturedWith(record: TransactionRecord, chargedBack: boolean, now: Date): TransactionRecord {
  const amount = pendingAmount(record);
  const capture = {
    ...operation("capture", amount, true, null, now),
    request_key: record.pending?.request_key ?? null,
  };
  return {
    ...settled(record),
    status: "completed",
    captured_amount: amount,
    chargedback: chargedBack,
    operations: [...record.operations, capture],
  };
}

/** Whether the transaction was captured for the request with this `Idempotency-Key` (its retry). */
export function capturedFor(record: TransactionRecord, requestKey: string | null): boolean {
  if (requestKey === null || record.status !== "completed") return false;
  return record.operations.some((op) => op.type === "capture" && op.success && op.request_key === requestKey);
}

export function voided(record: TransactionRecord, now: Date): TransactionRecord {
  return {
    ...settled(record),
    status: "voided",
    voided_amount: record.authorized_amount,
    operations: [...record.operations, operation("void", record.authorized_amount, true, null, now)],
  };
}

export function incremented(record: TransactionRecord, now: Date): TransactionRecord {
  const amount = pendingAmount(record);
  return {
    ...settled(record),
    authorized_amount: written(addAmounts(record.authorized_amount, amount), record.currency),
    operations: [...record.operations, operation("authorization", amount, true, null, now)],
  };
}

export function refunded(record: TransactionRecord, now: Date): TransactionRecord {
  const refund = pendingRefund(record);
  const total = written(addAmounts(record.refunded_amount, refund.amount), record.currency);
  return {
    ...settled(record),
    status: compareAmounts(total, record.captured_amount) >= 0 ? "refunded" : record.status,
    refunded_amount: total,
    refunds: [...record.refunds, refund],
    operations: [...record.operations, operation("refund", refund.amount, true, null, now)],
  };
}

/**
 * A refund the provider accepted and then reported failed (a Stripe refund to a closed card): the
 * money stays with the merchant, so it no longer counts as refunded, and may be refunded again.
 * Undefined when the refund is unknown or already failed (a repeated webhook).
 */
export function refundFailed(
  record: TransactionRecord,
  refundId: string,
  now: Date,
): TransactionRecord | undefined {
  const refund = record.refunds.find((item) => item.id === refundId && !item.has_failed);
  if (!refund) return undefined;
  const total = written(subtractAmounts(record.refunded_amount, refund.amount), record.currency);
  return {
    ...record,
    status: record.status === "refunded" ? "completed" : record.status,
    refunded_amount: total,
    refunds: record.refunds.map((item) => (item.id === refundId ? { ...item, has_failed: true } : item)),
    operations: [...record.operations, operation("refund", refund.amount, false, "refund.declined", now)],
  };
}

/**
 * A follow-up operation the provider declined. A declined capture fails the transaction; a declined
 * void, refund or increment leaves its state, with the failed operation (and failed refund) recorded.
 */
export function followUpDeclined(
  record: TransactionRecord,
  decline: { errorType: string; message: string },
  now: Date,
): TransactionRecord {
  const pending = record.pending;
  if (!pending) throw new Error(`Transaction ${record.id} has no reserved operation`);
  const next = failedAttempt(record, decline, now);
  if (pending.type === "capture") return { ...next, status: "failed" };
  if (pending.type === "refund" && pending.refund)
    return { ...next, refunds: [...record.refunds, { ...pending.refund, has_failed: true }] };
  return next;
}

function pendingAmount(record: TransactionRecord): string {
  if (!record.pending) throw new Error(`Transaction ${record.id} has no reserved operation`);
  return record.pending.amount;
}

function pendingRefund(record: TransactionRecord): Refund {
  if (!record.pending?.refund) throw new Error(`Transaction ${record.id} has no reserved refund`);
  return record.pending.refund;
}

export function newRefund(
  record: TransactionRecord,
  input: {
    amount: string;
    reason: RefundReason | null;
    information: string | null;
    metadata: Record<string, string>;
  },
  now: Date,
): Refund {
  return {
    id: newId("refund"),
    transaction_id: record.id,
    amount: input.amount,
    reason: input.reason,
    information: input.information,
    has_failed: false,
    metadata: input.metadata,
    sandbox: record.sandbox,
    created_at: now.toISOString(),
  };
}

/** What is left to refund: captured minus refunded. */
export function refundable(record: TransactionRecord): string {
  return written(subtractAmounts(record.captured_amount, record.refunded_amount), record.currency);
}

/** A computed amount written with its currency's decimals, as amounts are shown ("12.5" → "12.50"). */
function written(amount: string, currency: string): string {
  return fromMinorUnits(toMinorUnits(amount, currency), currency);
}

/** What the authorization still holds: authorized, not yet captured nor voided. */
export function available(record: TransactionRecord): string {
  if (record.status !== "authorized" && record.status !== "pending") return zeroIn(record.currency);
  return record.authorized_amount;
}

/**
 * Integer minor-unit numbers kept beside the decimal strings, for the conditions of the writes
 * (DynamoDB compares numbers, not decimal strings), and the capture deadline in epoch milliseconds.
 */
export function conditionAttributes(record: TransactionRecord) {
  const minor = (amount: string) => {
    const value = Number(toMinorUnits(amount, record.currency));
    if (!Number.isSafeInteger(value))
      throw new RangeError(`${amount} ${record.currency} is too large to process`);
    return value;
  };
  return {
    authorized_minor: minor(record.authorized_amount),
    captured_minor: minor(record.captured_amount),
    refundable_minor: minor(refundable(record)),
    capture_deadline_ms: captureDeadline(record),
  };
}

/**
 * Until when the payment can be captured, in epoch milliseconds: 7 days after a card authorization;
 * a native APM payment awaiting its capture has no such window (never 0 past it: no capture then).
 */
export function captureDeadline(record: TransactionRecord): number {
  if (paymentMethodOf(record) === "native-apm")
    return record.status === "pending" ? Number.MAX_SAFE_INTEGER : 0;
  return record.authorized_at ? Date.parse(record.authorized_at) + CAPTURE_WINDOW_MS : 0;
}

/** The `native_apm` answer of a native payment step, as the spec shows it (also `native_apm_response`). */
export function presentNativeApm(state: NativeApmState) {
  return {
    state: state.state,
    parameters: state.parameters,
    parameterDefinitions: state.parameters,
    parameterValues: { message: state.message },
  };
}

/** The transaction resource as the API returns it (the reference's Transaction shape). */
export function presentTransaction(record: TransactionRecord) {
  return {
    id: record.id,
    project_id: record.project_id,
    invoice_id: record.invoice_id,
    customer_id: record.customer_id,
    subscription_id: record.subscription_id,
    token_id: record.token_id,
    card_id: record.card_id,
    gateway_configuration_id: record.gateway_configuration_id,
    operations: record.operations.map(({ request_key: _kept, ...presented }) => presented),
    refunds: record.refunds,
    name: record.name,
    amount: record.amount,
    authorized_amount: record.authorized_amount,
    captured_amount: record.captured_amount,
    refunded_amount: record.refunded_amount,
    available_amount: available(record),
    voided_amount: record.voided_amount,
    currency: record.currency,
    error_code: record.error_code,
    error_message: record.error_message,
    gateway_name: record.gateway_name,
    three_d_s_status: record.three_d_s_status,
    status: record.status,
    authorized: record.authorized_at !== null,
    captured: !isZeroAmount(record.captured_amount),
    voided: record.status === "voided",
    refunded: !isZeroAmount(record.refunded_amount),
    chargedback: record.chargedback,
    auto_capture_at: record.auto_capture_at,
    metadata: record.metadata,
    sandbox: record.sandbox,
    created_at: record.created_at,
    payment_method: paymentMethodOf(record),
    native_apm: record.native_apm ? { state: record.native_apm.state } : null,
    native_apm_response: record.native_apm ? presentNativeApm(record.native_apm) : null,
    attempts: record.attempts ?? [],
    routing: record.routing ?? null,
    awaiting_gateway: record.pending?.awaiting_provider_since
      ? {
          operation: record.pending.type,
          amount: record.pending.amount,
          since: record.pending.awaiting_provider_since,
        }
      : null,
  };
}

export type PresentedTransaction = ReturnType<typeof presentTransaction>;

/** What the customer must do next: the open 3DS round's action, or nothing (undefined). */
export function customerAction(record: TransactionRecord): CustomerAction | undefined {
  return openRound(record) ? record.authentication?.action : undefined;
}

/** The round a 3DS exchange waits for an answer to; undefined when none is open. */
export function openRound(record: TransactionRecord): ThreeDSRound | undefined {
  return record.status === "waiting" && !record.pending ? openRoundOf(record.authentication) : undefined;
}
