import { type CardRetryRecord, cardCheckedWrite } from "../cards/store.ts";
import { clock, nowIn } from "../clock.ts";
import { asProviderCall } from "../db/round-trips.ts";
import type { TransactItem } from "../db/transactions.ts";
import { type EventName, eventWrites, type PendingEvent } from "../events/event.ts";
import {
  type AuthorizeOutcome,
  type CaptureOutcome,
  type CardOperations,
  type Declined,
  type DeclineType,
  type Initiator,
  type NativePaymentOutcome,
  type OperationKind,
  OutcomeUnknown,
  type PaymentConnector,
  ProviderUnreachable,
  type RecordedOutcome,
} from "../gateways/connector.ts";
import { declineError } from "../gateways/errors.ts";
import { configurationById, connectorOf } from "../gateways/routing.ts";
import type { ApiRequest } from "../http/api.ts";
import type { Caller, CredentialKind } from "../http/auth.ts";
import { ApiError, busy, conflict, invalidField, notFound } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import { isId, sharedUlidId } from "../ids.ts";
import { type Invoice, presentInvoice } from "../invoices/invoice.ts";
import { findInvoice } from "../invoices/store.ts";
import { amountProblemIn, isZeroAmount } from "../money.ts";
import { logger } from "../observability/logger.ts";
import { scheduleDailyClose, settlementLinesOf, settlementLineWrites } from "../payouts/settlement.ts";
import { blockingAdvice } from "../routing/scheme-rules.ts";
import { attemptCountWrites } from "../statistics/counts.ts";
import { exchangePut } from "../three-d-s/store.ts";
import {
  commitTransition,
  type Expected,
  findTransactionRecord,
  gatewayPaymentWrites,
  transitionWrite,
  type VersionedTransaction,
} from "./store.ts";
import {
  authorizationDeclined,
  authorizedWith,
  awaitingCustomer,
  awaitingCustomerInput,
  awaitingProvider,
  capturedWith,
  chainedCaptureOf,
  customerAction,
  failedAttempt,
  followUpDeclined,
  incremented,
  type PendingOperation,
  type PendingType,
  pendingCapture,
  presentNativeApm,
  presentTransaction,
  providerAttemptOf,
  refunded,
  type TransactionRecord,
  takenOver,
  voided,
  withAttempt,
} from "./transaction.ts";

/**
 * The core every payment operation shares: reserve → call → settle (`transaction.ts` holds the
 * states).
 *
 * 1. reserve: one conditional write claims the transaction for the operation (`pending`), so
 *    concurrent requests can never both call the provider for the same step;
 * 2. call the connector with the operation's stable reference (`callConnector`);
 * 3. settle: one DynamoDB transaction writes the outcome, its events and the request's stored answer
 *    (`Idempotency-Key`), on the condition that the claim is still ours (`settleOutcome`).
 *
 * A connector that fails is asked at once what the provider recorded (`lookup`): what it recorded is
 * settled, an operation it never received is settled as a failed attempt; only an outcome nobody
 * can tell yet leaves the reservation in place. A reservation left by a crash is taken over once its
 * lease is over, by the next request or by the recovery job (`recovery.ts`), and settled from what
 * the provider recorded (`resolveAbandoned`).
 */
export interface PaymentRequest {
  caller: Caller;
  /**
   * How the caller authenticated: the private key (the merchant's server: merchant-initiated
   * payments, full answers) or the public key (the shopper's browser or app: customer-initiated
   * payments, answered only what the browser needs).
   */
  credential: CredentialKind;
  /** The request's `Idempotency-Key`, if it has one. */
  requestKey: string | null;
  /** The writes that store the request's answer with the state change that produces it. */
  commit: (reply: Reply) => TransactItem[];
}

/** The payment view of an HTTP request. */
export function paymentRequest(request: ApiRequest): PaymentRequest {
  return {
    caller: request.caller,
    credential: request.caller.credential,
    requestKey: request.idempotencyKey ?? null,
    commit: (reply) => request.commitWith(reply),
  };
}

/** A request made by the service itself (scheduled jobs, recovery): nothing to answer or store. */
export function serviceRequest(caller: Caller): PaymentRequest {
  return { caller, credential: "private-key", requestKey: null, commit: () => [] };
}

/** Who a payment is initiated by: the shopper (public key) or the merchant (private key). */
export function initiatorOf(request: PaymentRequest): Initiator {
  return request.credential === "public-key" ? "customer" : "merchant";
}

/** Attempts of a request that keeps meeting concurrent changes of the same transaction. */
export const ATTEMPTS = 4;

export const inProgress = (id: string) =>
  busy(
    "request.transaction.operation-in-progress",
    `Another operation on transaction ${id} is in progress; retry later.`,
  );
export const concurrentChange = (id: string) =>
  busy("request.transaction.concurrent-update", `Transaction ${id} is being changed by another request.`);
export const wrongState = (record: TransactionRecord, action: string) =>
  conflict(
    "request.transaction.invalid-state",
    `Transaction ${record.id} is ${record.status}: it cannot be ${action}.`,
  );
/** The provider's answer is not known yet: the operation stays reserved until it is. */
const outcomeUnknown = (id: string) =>
  new ApiError(
    504,
    "gateway.timeout",
    `The gateway did not answer for transaction ${id}. The operation is resolved automatically; fetch the transaction to see its outcome.`,
  );

// ─── Reading ────────────────────────────────────────────────────────────────────────────────────

/** An invoice and its transaction (none before its first payment attempt), as a payment request finds them. */
export interface Payment {
  invoice: Invoice;
  current: VersionedTransaction | undefined;
}

/**
 * The invoice and its transaction, read together in one round trip: an invoice's transaction shares
 * its ULID (`sharedUlidId`). The two reads are not one snapshot: a transaction created between
 * them is met by the request's next step as any concurrent change is (its write's condition fails
 * and the request reads again).
 */
export async function paymentOf(caller: Caller, invoiceId: string): Promise<Payment> {
  if (!isId("invoice", invoiceId)) throw notFound("invoice", invoiceId);
  const [found, linked] = await Promise.all([
    findInvoice(caller.projectId, invoiceId),
    findTransactionRecord(caller.projectId, sharedUlidId("transaction", invoiceId)),
  ]);
  if (!found) throw notFound("invoice", invoiceId);
  const { invoice } = found;
  if (invoice.transaction_id === null) return { invoice, current: undefined };
  if (linked?.record.id === invoice.transaction_id) return { invoice, current: linked };
  // Created after the transaction's read, or named before transactions shared their invoice's ULID.
  return { invoice, current: await transactionOf(caller, invoice) };
}

export async function invoiceOf(caller: Caller, id: string): Promise<Invoice> {
  const found = isId("invoice", id) ? await findInvoice(caller.projectId, id) : undefined;
  if (!found) throw notFound("invoice", id);
  return found.invoice;
}

export async function transactionOf(
  caller: Caller,
  invoice: Invoice,
): Promise<VersionedTransaction | undefined> {
  if (invoice.transaction_id === null) return undefined;
  const found = await findTransactionRecord(caller.projectId, invoice.transaction_id);
  if (!found)
    throw new Error(`Invoice ${invoice.id} links to a missing transaction ${invoice.transaction_id}`);
  return found;
}

/** The invoice's transaction, which an operation needs: a 400 naming what to do when there is none yet. */
export function requiredTransactionOf(
  payment: Payment,
  errorType: "request.invoice.not-authorized" | "request.invoice.not-captured",
  message: string,
): VersionedTransaction {
  if (!payment.current) throw new ApiError(400, errorType, `Invoice ${payment.invoice.id} ${message}`);
  return payment.current;
}

/** An amount a request names, in the invoice's currency: a 400 naming `field` unless it is one above zero. */
export function checkAmount(field: string, amount: string, currency: string): void {
  const problem = amountProblemIn(amount, currency);
  if (problem) throw invalidField(field, problem);
  if (isZeroAmount(amount)) throw invalidField(field, "must be above zero");
}

export async function reread(caller: Caller, id: string): Promise<VersionedTransaction> {
  const found = await findTransactionRecord(caller.projectId, id);
  if (!found) throw notFound("transaction", id);
  return found;
}

// ─── Connectors ─────────────────────────────────────────────────────────────────────────────────

/** The connector a transaction's operations go through: its gateway configuration's. */
export async function connectorFor(record: TransactionRecord): Promise<PaymentConnector> {
  return connectorOf(await configurationById(record.project_id, record.gateway_configuration_id));
}

/** The card operations of a connector (a transaction paid by card only goes to a gateway that has them). */
export function cardOperations(connector: PaymentConnector, record: TransactionRecord): CardOperations {
  if (!connector.card) throw new Error(`The gateway of transaction ${record.id} takes no cards`);
  return connector.card;
}

/** How a connector call ended: the provider's outcome, or "not done" (see `callConnector`). */
export type CallResult<T> = { outcome: T } | { notDone: Declined };

const NOT_DONE: Declined = {
  status: "declined",
  errorType: "gateway.error",
  message: "The gateway failed to process the operation; nothing was done. It can be tried again.",
};

const UNREACHABLE: Declined = {
  status: "declined",
  errorType: "gateway.unavailable",
  message: "The gateway could not be reached; nothing was sent to it. It can be tried again.",
};

/**
 * Calls the connector for a reserved operation under the connector contract (`connector.ts`): an
 * outcome is returned as it is; `OutcomeUnknown` leaves the reservation (a 504); any other failure
 * is resolved by asking the provider what it recorded under the reference: that outcome, or "not
 * done" when it recorded nothing. A lookup that fails too leaves the reservation (a 504).
 */
export async function callConnector<T extends RecordedOutcome>(
  connector: PaymentConnector,
  held: VersionedTransaction,
  kind: OperationKind,
  call: () => Promise<T>,
): Promise<CallResult<T>> {
  const { record } = held;
  const reference = (record.pending as PendingOperation).id;
  try {
    return { outcome: await asProviderCall(call) };
  } catch (error) {
    if (error instanceof ProviderUnreachable) {
      logger.warn("Gateway unreachable: nothing was done", { transaction_id: record.id, reference, error });
      return {
        notDone:
          error.errorType === "gateway.rate-limited"
            ? {
                ...UNREACHABLE,
                errorType: "gateway.rate-limited",
                message:
                  "The gateway refused the request for too many requests; nothing was done. It can be tried again shortly.",
              }
            : UNREACHABLE,
      };
    }
    if (error instanceof OutcomeUnknown) {
      logger.warn("Gateway outcome unknown: the operation stays reserved", {
        transaction_id: record.id,
        error,
      });
      throw outcomeUnknown(record.id);
    }
    logger.error("Gateway call failed: asking the gateway what it recorded", {
      transaction_id: record.id,
      reference,
      error,
    });
    const found = await lookupOrUnknown(connector, record, kind, reference);
    return found === undefined ? { notDone: NOT_DONE } : { outcome: found as T };
  }
}

/** What the provider recorded (undefined: nothing); throws the 504 when it cannot tell. */
/**
 * What the provider recorded under `reference`, undefined when it never received it; throws the 504
 * (the operation stays reserved, resolved later) when it cannot tell now.
 */
export async function lookupOrUnknown(
  connector: PaymentConnector,
  record: TransactionRecord,
  kind: OperationKind,
  reference: string,
  gatewayReference: string | null = record.gateway_reference,
): Promise<RecordedOutcome | undefined> {
  try {
    const providerState =
      kind === "authorization" || kind === "authentication"
        ? (record.authentication?.provider_state ?? null)
        : null;
    const found = await asProviderCall(() =>
      connector.lookup({ scope: record.project_id, kind, reference, gatewayReference, providerState }),
    );
    return found.status === "found" ? found.outcome : undefined;
  } catch (error) {
    logger.warn("Gateway lookup failed: the operation stays reserved", { transaction_id: record.id, error });
    throw outcomeUnknown(record.id);
  }
}

// ─── Settling ───────────────────────────────────────────────────────────────────────────────────

/** The events of a change: the invoice (as it stands with its transaction) and the transaction. */
export function events(invoice: Invoice, record: TransactionRecord, names: EventName[]): PendingEvent[] {
  const data = {
    invoice: presentInvoice({ ...invoice, transaction_id: record.id }),
    transaction: presentTransaction(record),
  };
  return names.map((name) => ({ name, data }));
}

/**
 * A payment's answer: the transaction, and always a `customer_action`, `{}` when there is nothing to
 * do (a server library fails without it). The HTTP core shows the public key (the shopper's browser
 * or app) only the action, when there is one (`PUBLIC_KEY_ACCESS.payment` in `shared/http/access.ts`).
 */
export function paymentReply(record: TransactionRecord): Reply {
  return ok({ transaction: presentTransaction(record), customer_action: customerAction(record) ?? {} });
}

/** The answer of an operation settled for the request that made it. */
export function operationReply(record: TransactionRecord, type: PendingType): Reply {
  if (type === "authorization" || type === "capture") return paymentReply(record);
  if (type === "native-payment") return nativePaymentReply(record);
  if (type === "refund")
    return ok({ refund: record.refunds.at(-1), transaction: presentTransaction(record) });
  return ok({ transaction: presentTransaction(record) });
}

/** A native APM step's answer: where the payment stands (`native_apm`), and the transaction. */
export function nativePaymentReply(record: TransactionRecord): Reply {
  if (!record.native_apm) throw new Error(`Transaction ${record.id} has no native APM state`);
  return ok({ native_apm: presentNativeApm(record.native_apm), transaction: presentTransaction(record) });
}

/** The decline a failed transaction was settled with, as the API answers it (also to a retry). */
export function recordedDecline(record: TransactionRecord): ApiError {
  return declineError({
    status: "declined",
    errorType: (record.error_code ?? "card.declined") as DeclineType,
    message: record.error_message ?? "The payment was declined.",
  });
}

/** Commits a settlement; a card anonymized meanwhile only loses its optional check write. */
export async function commitSettlement(
  held: VersionedTransaction,
  items: TransactItem[],
  optional: TransactItem[],
): Promise<void> {
  let outcome = await commitTransition([...items, ...optional]);
  if (typeof outcome === "object" && outcome.failedCheck >= items.length)
    outcome = await commitTransition(items);
  if (outcome === "changed") throw inProgress(held.record.id);
  if (outcome !== "committed") throw new Error(`Settling transaction ${held.record.id} failed a condition`);
}

/** Who a settlement is for: the request it answers, if any, and the invoice its events show. */
export interface Settlement {
  request: PaymentRequest;
  invoice: Invoice;
  /** Whether the settled operation is the request's own, so its answer is stored with it. */
  answers: boolean;
}

const FOLLOW_UP_EVENTS: Record<
  Exclude<PendingType, "authorization" | "native-payment" | "authentication" | "payout">,
  EventName[]
> = {
  capture: ["transaction.captured", "invoice.completed"],
  void: ["transaction.voided"],
  refund: ["transaction.refunded"],
  increment: ["transaction.authorized"],
};

/**
 * What the capture chained to an authorization (`PendingOperation.chained_capture`) became, for the write that
 * settles the authorization: the provider's answer to it, or "reserved" when that answer is not
 * known yet (the transaction is settled as authorized and held for the capture, which the recovery
 * job settles). Not given: the capture was not made, and the authorization settles alone.
 */
export type ChainedResult = CallResult<RecordedOutcome> | "reserved";

/** What one outcome makes of a transaction: its next state, the events and writes that go with it. */
interface Step {
  next: TransactionRecord;
  events: PendingEvent[];
  extra: TransactItem[];
  /** Writes dropped when their condition fails (a card anonymized meanwhile). */
  optional: TransactItem[];
  /** The error the request answers, when the outcome is a refusal. */
  refusal?: ApiError;
}

/**
 * Settles a held operation with what the provider answered (or recorded), in one DynamoDB
 * transaction with its events and, when it answers the request, the request's stored answer (a
 * refusal is stored by the HTTP core as the error answer it becomes). An authorization that chains
 * a capture settles with it (`chained`): authorized then captured (or its capture declined) in the
 * same write. Returns the transaction as settled and the error to answer when the outcome is a
 * refusal.
 */
export async function settleOutcome(
  settlement: Settlement,
  held: VersionedTransaction,
  result: CallResult<RecordedOutcome>,
  chained?: ChainedResult,
): Promise<{ current: VersionedTransaction; refusal?: ApiError }> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  // Business time: what the settlement records (authorized_at starts the capture window).
  const now = nowIn(settlement.request.caller.environment);
  let step = settledStep(settlement.invoice, record, result, now);
  if (chained !== undefined && pending.chained_capture && step.next.status === "authorized") {
    const capturing = chainedCaptureOf(step.next, pending);
    if (chained === "reserved") step = { ...step, next: capturing };
    else {
      const captured = settledStep(settlement.invoice, capturing, chained, now);
      step = {
        ...captured,
        events: [...step.events, ...captured.events],
        extra: [...step.extra, ...captured.extra],
        optional: [...step.optional, ...captured.optional],
      };
    }
  }
  const { next, refusal } = step;
  // The sandbox gateway's settled money, for its payouts: written with the settlement, and the day's
  // close scheduled beside the write (once per container and day), so it costs no wait of its own.
  const lines = settlementLinesOf(record, next, now);
  await Promise.all([
    commitSettlement(
      held,
      [
        transitionWrite(held, next, { status: record.status, pending: pending.id }),
        ...step.extra,
        ...settlementLineWrites(lines),
        ...attemptCountWrites(next, pending, result),
        ...eventWrites(record.project_id, step.events, now),
        ...(settlement.answers && !refusal
          ? settlement.request.commit(operationReply(next, pending.type))
          : []),
      ],
      step.optional,
    ),
    lines.length > 0
      ? scheduleDailyClose(record.project_id, settlement.request.caller.environment, lines)
      : undefined,
  ]);
  const current = { record: next, version: held.version + 1 };
  return refusal ? { current, refusal } : { current };
}

/** The step a held operation's outcome makes (see `settleOutcome`). */
function settledStep(
  invoice: Invoice,
  held: TransactionRecord,
  result: CallResult<RecordedOutcome>,
  now: Date,
): Step {
  const pending = held.pending as PendingOperation;
  // An authorization's attempt, unless the request that made it recorded it (with its duration).
  const record =
    pending.type === "authorization" && !held.attempts?.some((kept) => kept.reference === pending.id)
      ? withAttempt(held, providerAttemptOf(held, "notDone" in result ? result : result.outcome, null, now))
      : held;
  const scope = record.project_id;
  const step = (
    next: TransactionRecord,
    names: EventName[],
    options: { extra?: TransactItem[]; optional?: TransactItem[]; refusal?: ApiError } = {},
  ): Step => ({
    next,
    events: events(invoice, next, names),
    extra: options.extra ?? [],
    optional: options.optional ?? [],
    ...(options.refusal ? { refusal: options.refusal } : {}),
  });

  if ("notDone" in result) {
    const refusal = new ApiError(502, result.notDone.errorType, result.notDone.message);
    return step(failedAttempt(record, result.notDone, now), [], { refusal });
  }

  if (pending.type === "authorization") {
    const outcome = result.outcome as AuthorizeOutcome;
    if (outcome.status === "customer-action") {
      // The exchange's first round opens it: its pages find the transaction by their token, and the
      // invoice is pending the customer.
      const next = awaitingCustomer(
        record,
        outcome.round,
        outcome.customerAction,
        now,
        outcome.providerState,
      );
      const token = next.authentication?.token as string;
      const opens = record.authentication === null;
      return step(next, opens ? ["invoice.pending"] : [], {
        extra: opens ? [exchangePut(token, { kind: "transaction", scope, transactionId: record.id })] : [],
      });
    }
    // The card's CVC was used by this authorization: it is dropped, with the checks' results (and
    // the scheme's id of a customer-initiated approval, for the merchant-initiated payments to come).
    const optional = [
      cardCheckedWrite(
        scope,
        record.card_id ?? "",
        outcome.checks,
        outcome.status === "approved" ? outcome.networkTransactionId : null,
        cardRetryRecord(outcome, now),
      ),
    ];
    if (outcome.status === "declined") {
      const next = authorizationDeclined(record, outcome, outcome.threeDS, now);
      return step(next, ["transaction.failed"], { optional, refusal: declineError(outcome) });
    }
    const next = authorizedWith(record, outcome.gatewayReference, outcome.threeDS, now);
    return step(next, ["transaction.authorized"], { optional, extra: gatewayPaymentWrites(next) });
  }

  if (pending.type === "native-payment") {
    const outcome = result.outcome as NativePaymentOutcome;
    if (outcome.status === "declined") {
      // The customer may try again (another email, another code): the transaction keeps its state.
      return step(failedAttempt(record, outcome, now), [], { refusal: declineError(outcome) });
    }
    if (outcome.status === "customer-input") {
      return step(awaitingCustomerInput(record, outcome.parameters, outcome.message, now), []);
    }
    return step(pendingCapture(record, outcome.gatewayReference, outcome.message, now), ["invoice.pending"]);
  }

  const type = pending.type;
  if (type === "authentication" || type === "payout")
    throw new Error(`A ${type} is settled by its own module, not as a payment step`);
  const outcome = result.outcome as CaptureOutcome;
  if (outcome.status === "received") {
    // The provider decides later: the operation stays reserved until its webhook settles it.
    return step(awaitingProvider(record, now), []);
  }
  if (outcome.status === "declined") {
    const next = followUpDeclined(record, outcome, now);
    return step(next, type === "capture" ? ["transaction.failed"] : [], { refusal: declineError(outcome) });
  }
  const next =
    type === "capture"
      ? capturedWith(record, "chargedBack" in outcome && outcome.chargedBack === true, now)
      : type === "void"
        ? voided(record, now)
        : type === "refund"
          ? refunded(record, now)
          : incremented(record, now);
  return step(next, FOLLOW_UP_EVENTS[type]);
}

/** What an authorization's outcome tells the card schemes' retry rules, written on the card. */
export function cardRetryRecord(
  outcome: { status: string; merchantAdviceCode?: string },
  now: Date,
): CardRetryRecord | undefined {
  if (outcome.status === "approved") return { approved: true };
  if (outcome.status !== "declined") return undefined;
  const at = now.toISOString();
  const code = blockingAdvice(outcome);
  return { declinedAt: at, ...(code ? { merchantAdviceBlock: { code, at } } : {}) };
}

// ─── Abandoned reservations ─────────────────────────────────────────────────────────────────────

/** Claims an abandoned reservation again; undefined when another request was faster. */
export async function takeOver(current: VersionedTransaction): Promise<VersionedTransaction | undefined> {
  const pending = current.record.pending as PendingOperation;
  const now = clock.now();
  const next = takenOver(current.record);
  const expected: Expected = {
    status: current.record.status,
    pending: null,
    takeover: { id: pending.id, now: now.getTime() },
  };
  const outcome = await commitTransition([transitionWrite(current, next, expected)]);
  return outcome === "committed" ? { record: next, version: current.version + 1 } : undefined;
}

/** What became of an abandoned operation: settled as the provider recorded it, or never done. */
export type Resolution = "settled" | "not-done";

/**
 * An abandoned operation, settled: `settledAs` is the provider's recorded outcome it was settled
 * with (`approved`, `declined`, …), or `not-done` when the provider never received it.
 */
export interface Resolved {
  current: VersionedTransaction;
  resolution: Resolution;
  settledAs: string;
  refusal?: ApiError;
}

const INTERRUPTED: Declined = {
  status: "declined",
  errorType: "gateway.error",
  message:
    "The operation was interrupted before the gateway received it; nothing was done. It can be tried again.",
};

/**
 * Settles a taken-over reservation from what the provider recorded under its reference. An
 * operation the provider never received is settled as a failed attempt (the transaction keeps its
 * state). An approved authorization that chains a capture settles with what the provider recorded
 * of the capture, if anything (a capture it never received was not made: the transaction is left
 * authorized). Throws the 504 when the provider cannot tell yet: the reservation then lapses again
 * for a later try.
 */
export async function resolveAbandoned(
  settlement: Settlement,
  held: VersionedTransaction,
): Promise<Resolved> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  // Settled by their own modules, which build on this one (imported when met: no cycle at load).
  if (pending.type === "authentication")
    return (await import("./settle-extras.ts")).resolveAbandonedAuthentication(settlement, held);
  if (pending.type === "payout")
    return (await import("./settle-extras.ts")).resolveAbandonedPayout(settlement, held);
  const connector = await connectorFor(record);
  const found = await lookupOrUnknown(connector, record, pending.type, pending.id);
  const chained =
    pending.chained_capture && found?.status === "approved"
      ? await lookupOrUnknown(
          connector,
          record,
          "capture",
          pending.chained_capture.id,
          "gatewayReference" in found ? found.gatewayReference : record.gateway_reference,
        )
      : undefined;
  const settled = await settleOutcome(
    settlement,
    held,
    found === undefined ? { notDone: INTERRUPTED } : { outcome: found },
    chained === undefined ? undefined : { outcome: chained },
  );
  logger.info("Abandoned operation settled from what the gateway recorded", {
    transaction_id: record.id,
    reference: pending.id,
    operation: pending.type,
    recorded: found !== undefined,
    status: settled.current.record.status,
  });
  return {
    ...settled,
    resolution: found === undefined ? "not-done" : "settled",
    settledAs: found?.status ?? "not-done",
  };
}
