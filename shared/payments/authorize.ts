import { routingScheme } from "../cards/card.ts";
import { cardCredentials } from "../cards/service.ts";
import { cardCheckedWrite } from "../cards/store.ts";
import { type ClockedEnvironment, nowIn } from "../clock.ts";
import { findCustomer } from "../customers/store.ts";
import { transactWrite } from "../db/transactions.ts";
import type {
  CheckResults,
  Declined,
  Initiator,
  PaymentConnector,
  RecordedOutcome,
  ThreeDSChannel,
  ThreeDSContext,
  ThreeDSRoundAnswer,
} from "../gateways/connector.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, conflict, invalidField, notFound, privateKeyRequired } from "../http/errors.ts";
import type { Reply } from "../http/reply.ts";
import { isId, sharedUlidId } from "../ids.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { compareAmounts, toMinorUnits } from "../money.ts";
import { logger } from "../observability/logger.ts";
import { recordHealth } from "../routing/health.ts";
import { cardEntryWrites } from "../search/entries.ts";
import { attemptCountWrites } from "../statistics/counts.ts";
import { relationOf, roundAnswer, threeDSContext } from "../three-d-s/exchange.ts";
import { isGatewayRequest, parseGatewayRequest, type ThreeDSAnswer } from "../three-d-s/gateway-request.ts";
import { threeDSChannelOf } from "../three-d-s/schema.ts";
import { parseInput } from "../validation/parse.ts";
import { beforeAuthorization, isAuthenticationOnly, paidOut } from "./authenticate.ts";
import { cancelAutoCapture, scheduleAutoCapture } from "./auto-capture.ts";
import { answered, nextStep, noCascade, routed } from "./cascade.ts";
import {
  ATTEMPTS,
  type CallResult,
  callConnector,
  cardOperations,
  cardRetryRecord,
  checkAmount,
  commitSettlement,
  concurrentChange,
  connectorFor,
  initiatorOf,
  inProgress,
  type Payment,
  type PaymentRequest,
  paymentOf,
  paymentReply,
  recordedDecline,
  resolveAbandoned,
  takeOver,
  transactionOf,
} from "./core.ts";
import { type FollowUpPlan, settleAuthorization } from "./follow-up.ts";
import { authorizeInput } from "./schema.ts";
import {
  currencyMismatch,
  customerCurrencyClaim,
  type PaymentRead,
  paymentWithSource,
  resolveSource,
  type Source,
} from "./sources.ts";
import { commitTransition, insertTransaction, transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  CAPTURE_WINDOW_MS,
  cascaded,
  leaseExpired,
  newTransaction,
  openRound,
  type PendingOperation,
  providerAttemptOf,
  reserved,
  type TransactionRecord,
  threeDSAnswered,
  withAttempt,
} from "./transaction.ts";

/**
 * Authorization: the first step of every card payment, by itself (`POST /invoices/{id}/authorize`)
 * or as the implicit first step of a capture with a source. The invoice's one transaction is created
 * already reserved for its authorization, in the same DynamoDB transaction that links the invoice
 * to it on the condition that it has none yet (so concurrent authorizations make one transaction).
 */

/** How an authorization is answered: by itself, or as the first step of a capture. */
export type AuthorizeMode = "authorize" | "capture";

/**
 * An authorization's end: the transaction (`captured` when the capture `AuthorizeOptions.capture` asked
 * for was made with it and settled in the same write, with the request's answer), or the answer.
 */
export type AuthorizeResult = { current: VersionedTransaction; captured?: boolean } | { answer: Reply };

export interface AuthorizeOptions {
  /** A card or customer token id; or, with `answer`, the `gway_req_` source that carried it. */
  sourceId: string;
  /** The browser's or app's answer to the payment's open 3DS round (a `gway_req_` source). */
  answer?: ThreeDSAnswer;
  incremental: boolean;
  metadata: Record<string, string>;
  initiator: Initiator;
  /** Where the cardholder would authenticate, should the issuer ask (see `threeDSChannelOf`). */
  channel: ThreeDSChannel;
  /** The scheme the payer chose among the card's (`preferred_scheme`); null: the card's own choice. */
  preferredScheme: string | null;
  /**
   * A capture with a source: the capture chained to the authorization's reservation, of `amount`
   * (null: all of it), made right after an approval when `plan` allows it (`settleAuthorization`).
   */
  capture?: { plan: FollowUpPlan; amount: string | null };
  /** Only with authorize; fixed by the request that creates the transaction. */
  autoCaptureAt?: string | null;
  autoCaptureAmount?: string | null;
  /** The configuration the request pins the payment to (`gateway_configuration_id`); null: routing decides. */
  pinned: string | null;
  /** After 3DS with one provider, a cascade may go on without liability shift (`retry_drop_liability_shift`). */
  dropLiabilityShift: boolean;
  /** `override_mac_blocking`: try a card a Mastercard merchant advice code blocked. */
  overrideMacBlocking: boolean;
}

/** Whether the sandbox connector accepts incremental authorizations (it does). */
export const CONNECTOR_SUPPORTS_INCREMENTS = true;

/** `auto_capture_at` must fall after now and within the capture window of an authorization made now. */
function checkAutoCaptureAt(at: string, environment: ClockedEnvironment): string {
  const due = Date.parse(at);
  const now = nowIn(environment).getTime();
  if (due <= now) throw invalidField("auto_capture_at", "must be in the future");
  if (due >= now + CAPTURE_WINDOW_MS)
    throw invalidField("auto_capture_at", "must be within the 7 days an authorization can be captured");
  return at;
}

/** `POST /invoices/{id}/authorize` */
export async function authorizeInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(authorizeInput, input);
  const options = cardPaymentOptions(request, fields);
  const read = await readPayment(request, invoiceId, options);
  const { invoice } = read.payment;
  const result = await authorizeStep(
    request,
    read,
    { ...options, ...autoCaptureOptions(request, invoice, fields) },
    "authorize",
  );
  if ("answer" in result) return result.answer;
  const reply = paymentReply(result.current.record);
  await transactWrite(request.commit(reply));
  return reply;
}

/**
 * What a card payment request reads before anything else, in one round trip for a card: the
 * invoice, its transaction, and the source (a `gway_req_` answer pays with the transaction's own).
 */
export async function readPayment(
  request: PaymentRequest,
  invoiceId: string,
  options: AuthorizeOptions,
): Promise<PaymentRead> {
  if (options.answer) return { payment: await paymentOf(request.caller, invoiceId) };
  return paymentWithSource(request.caller, invoiceId, options.sourceId);
}

/** The options of a card payment request (authorize, or capture with a source), read before anything else. */
export function cardPaymentOptions(
  request: PaymentRequest,
  fields: {
    source?: string | undefined;
    incremental?: boolean | undefined;
    metadata?: Record<string, string> | undefined;
    preferred_scheme?: string | null | undefined;
    device?: { channel?: string } | undefined;
    enable_three_d_s_2?: boolean | undefined;
    gateway_configuration_id?: string | undefined;
    retry_drop_liability_shift?: boolean | undefined;
    override_mac_blocking?: boolean | undefined;
  },
): AuthorizeOptions {
  if (!fields.source) throw invalidField("source", "is required", "missing-source");
  // The shopper pays with their own card: a customer's saved token is charged by the merchant.
  if (request.credential === "public-key" && isId("token", fields.source)) {
    throw privateKeyRequired("pay with a customer token");
  }
  return {
    sourceId: fields.source,
    ...(isGatewayRequest(fields.source) ? { answer: parseGatewayRequest(fields.source) } : {}),
    incremental: fields.incremental ?? false,
    metadata: fields.metadata ?? {},
    initiator: initiatorOf(request),
    channel: threeDSChannelOf(fields),
    preferredScheme: fields.preferred_scheme ?? null,
    pinned: fields.gateway_configuration_id ?? null,
    dropLiabilityShift: fields.retry_drop_liability_shift ?? false,
    overrideMacBlocking: fields.override_mac_blocking ?? false,
  };
}

/**
 * `auto_capture_at` and `capture_amount`: the capture asked for later. Checked against the invoice;
 * the transaction keeps them from the request that creates it.
 */
export function autoCaptureOptions(
  request: PaymentRequest,
  invoice: Invoice,
  fields: { auto_capture_at?: string | null | undefined; capture_amount?: string | null | undefined },
): Pick<AuthorizeOptions, "autoCaptureAt" | "autoCaptureAmount"> {
  const autoCaptureAt = fields.auto_capture_at
    ? checkAutoCaptureAt(fields.auto_capture_at, request.caller.environment)
    : null;
  if (fields.capture_amount && !autoCaptureAt)
    throw invalidField("capture_amount", "applies only with auto_capture_at");
  if (fields.capture_amount) {
    checkAmount("capture_amount", fields.capture_amount, invoice.currency);
    if (compareAmounts(fields.capture_amount, invoice.amount) > 0)
      throw invalidField("capture_amount", `must be at most the invoice's amount, ${invoice.amount}`);
  }
  return { autoCaptureAt, autoCaptureAmount: fields.capture_amount ?? null };
}

/**
 * Brings the invoice's transaction to `authorized` with `options.sourceId` (or answers the customer
 * action the issuer asks for). A transaction already past its authorization is returned as it is.
 */
export async function authorizeStep(
  request: PaymentRequest,
  read: PaymentRead,
  options: AuthorizeOptions,
  mode: AuthorizeMode,
): Promise<AuthorizeResult> {
  if (options.answer) return answerRound(request, read.payment, options, options.answer, mode);
  const { caller } = request;
  let known = read.payment.invoice;
  const source = await (read.source ?? resolveSource(caller, known, options.sourceId));
  const scheme = routingScheme(source.card, options.preferredScheme);
  let current = read.payment.current;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    // The first attempt goes on from the request's first read; the next ones read again.
    if (attempt > 1) current = await transactionOf(caller, known);
    if (!current) {
      const created = await createTransaction(request, known, source, options);
      if ("takenBy" in created) {
        known = { ...known, transaction_id: created.takenBy };
        continue;
      }
      return runAuthorization(request, known, created.held, source, scheme, options, mode, created.probe);
    }
    if (current.record.kind === "payout") throw paidOut(known.id, current.record.id);
    // After 3DS without paying: its result is reused, or another card starts over (`authenticate.ts`).
    if (isAuthenticationOnly(current.record))
      current = await beforeAuthorization(request, known, current, source, options);
    const { record } = current;
    if (record.card_id !== source.cardId || record.token_id !== source.tokenId) {
      throw conflict(
        "request.invoice.payment-attempted",
        `Invoice ${known.id} is being paid with another source (transaction ${record.id}).`,
      );
    }
    const next = await nextAttempt(request, known, current, options, mode, undefined, source);
    if (next === "again") continue;
    if ("answer" in next || !("held" in next)) return next;
    return runAuthorization(request, known, next.held, source, scheme, options, mode, next.probe);
  }
  throw concurrentChange(known.transaction_id ?? known.id);
}

/**
 * Where an existing transaction goes from here: past its authorization (returned as it is), failed
 * (its decline), busy (409), an abandoned attempt to settle first ("again"), an open 3DS round to
 * answer first (the same customer action again), or the next authorization attempt, reserved.
 * `answer`, when given, is recorded for the open round in the write that reserves the attempt.
 */
async function nextAttempt(
  request: PaymentRequest,
  invoice: Invoice,
  current: VersionedTransaction,
  options: AuthorizeOptions,
  mode: AuthorizeMode,
  answer?: ThreeDSRoundAnswer,
  source?: Source,
): Promise<AuthorizeResult | { held: VersionedTransaction; probe: boolean } | "again"> {
  const { record } = current;
  if (record.status === "failed") throw recordedDecline(record);
  if (record.status !== "waiting") return { current };
  if (record.pending) {
    if (!leaseExpired(record.pending)) throw inProgress(record.id);
    // An abandoned attempt is settled from what the gateway recorded; then this request goes on
    // from where that leaves the transaction.
    const held = await takeOver(current);
    if (!held) return "again";
    const { current: settled } = await resolveAbandoned({ request, invoice, answers: false }, held);
    // A capture with a source cut off before it settled, and captured: this very capture's answer
    // (as `followUp` answers a capture found abandoned).
    const chained = record.pending.chained_capture;
    const asked = options.capture ? captureAmountOf(options.capture, record) : undefined;
    const own = mode === "capture" && chained && asked && compareAmounts(chained.amount, asked) === 0;
    if (own && settled.record.status === "completed") {
      const reply = paymentReply(settled.record);
      await transactWrite(request.commit(reply));
      return { answer: reply };
    }
    return "again";
  }
  if (openRound(record) && !answer) {
    // The customer has not answered the open round yet: the same action again.
    const reply = paymentReply(record);
    await transactWrite(request.commit(reply));
    return { answer: reply };
  }
  const withAnswer = answer ? threeDSAnswered(record, answer) : record;
  // A new attempt of a payment no provider has authenticated is routed again (a 3DS round answered
  // goes on with the provider that asked for it).
  const route =
    source && !record.authentication
      ? await routed(request.caller, invoice, source, { ...options }, record.id)
      : undefined;
  const routedRecord: TransactionRecord = route
    ? {
        ...withAnswer,
        gateway_configuration_id: route.first.configurationId,
        gateway_name: route.first.name,
        routing: route.explanation,
      }
    : withAnswer;
  const demand = route ? route.explanation.require_three_d_s : record.routing?.require_three_d_s;
  const next = reserved(routedRecord, "authorization", record.amount, request.requestKey, {
    channel: options.channel,
    ...(options.capture ? { thenCapture: captureAmountOf(options.capture, record) } : {}),
    ...(demand ? { demand: "required" as const } : {}),
  });
  const outcome = await commitTransition([
    transitionWrite(current, next, { status: "waiting", pending: null }),
    // The card's search entry again: an authentication-only transaction may have moved to this card.
    ...(source ? cardEntryWrites(next, source.card) : []),
  ]);
  return outcome === "committed"
    ? { held: { record: next, version: current.version + 1 }, probe: route?.first.probe ?? false }
    : "again";
}

/**
 * What a capture with a source captures: the `amount` it names, else what the request that met the
 * 3DS round asked for (`requested_capture_amount`), else the whole invoice.
 */
function captureAmountOf(
  capture: NonNullable<AuthorizeOptions["capture"]>,
  record: TransactionRecord,
): string {
  return capture.amount ?? record.requested_capture_amount ?? record.amount;
}

/**
 * A `gway_req_` source: the browser's or app's answer to the invoice's open 3DS round. It pays with
 * the transaction's own source, and only answers the round it was made for: an answer naming a
 * fingerprint page must name this payment's own; a replayed answer to an earlier round of this
 * payment gets the payment's current answer (nothing moves twice); any other is a 400 naming
 * `source`.
 */
async function answerRound(
  request: PaymentRequest,
  payment: Payment,
  options: AuthorizeOptions,
  answer: ThreeDSAnswer,
  mode: AuthorizeMode,
): Promise<AuthorizeResult> {
  const { caller } = request;
  const { invoice } = payment;
  let known = invoice;
  let current = payment.current;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) current = await transactionOf(caller, known);
    const relation = relationOf(current?.record.authentication, answer, `invoice ${invoice.id}`);
    const { record } = current as VersionedTransaction;
    known = { ...known, transaction_id: record.id };
    const given = relation === "answers" && openRound(record) ? roundAnswer(answer) : undefined;
    const next = await nextAttempt(request, known, current as VersionedTransaction, options, mode, given);
    if (next === "again") continue;
    if ("answer" in next || !("held" in next)) return next;
    const source = await resolveSource(caller, known, record.token_id ?? record.card_id ?? "");
    return runAuthorization(
      request,
      known,
      next.held,
      source,
      routingScheme(source.card, options.preferredScheme),
      options,
      mode,
      next.probe,
    );
  }
  throw concurrentChange(known.transaction_id ?? known.id);
}

async function createTransaction(
  request: PaymentRequest,
  invoice: Invoice,
  source: Source,
  options: AuthorizeOptions,
): Promise<{ held: VersionedTransaction; probe: boolean } | { takenBy: string }> {
  const { caller } = request;
  if (options.incremental && !CONNECTOR_SUPPORTS_INCREMENTS) {
    throw invalidField("incremental", "the card gateway does not support incremental authorizations");
  }
  const route = await routed(caller, invoice, source, options, sharedUlidId("transaction", invoice.id));
  const record = newTransaction(
    {
      projectId: caller.projectId,
      sandbox: caller.sandbox,
      invoice,
      source,
      paymentMethod: "card",
      gateway: { configurationId: route.first.configurationId, name: route.first.name },
      routing: route.explanation,
      incremental: options.incremental,
      autoCaptureAt: options.autoCaptureAt ?? null,
      autoCaptureAmount: options.autoCaptureAmount ?? null,
      metadata: options.metadata,
      requestKey: request.requestKey,
      channel: options.channel,
      ...(options.capture ? { thenCapture: options.capture.amount ?? invoice.amount } : {}),
    },
    nowIn(caller.environment),
  );
  // Fails early, before anything is written, for amounts beyond what conditions can compare.
  toMinorUnits(record.amount, record.currency);
  const inserted = await insertCardTransaction(caller, invoice, source, record);
  return "takenBy" in inserted ? inserted : { held: inserted, probe: route.first.probe };
}

/**
 * Writes the invoice's first card transaction (an authorization's, or an authentication's), on the
 * conditions that its source can still pay and its customer takes the invoice's currency; the
 * transaction another request made first is answered as `takenBy`. A refused condition is thrown
 * with why (the customer is read only then).
 */
export async function insertCardTransaction(
  caller: Caller,
  invoice: Invoice,
  source: Source,
  record: TransactionRecord,
): Promise<VersionedTransaction | { takenBy: string }> {
  const checks = [...source.checks];
  if (invoice.customer_id) checks.push(customerCurrencyClaim(caller, invoice.customer_id, invoice.currency));
  // The invoice allows increments as an authorization's transaction makes it (its gateway's support).
  const outcome = await insertTransaction(
    record,
    { incremental: CONNECTOR_SUPPORTS_INCREMENTS },
    checks,
    cardEntryWrites(record, source.card),
  );
  if (outcome === "created") return { record, version: 1 };
  if (outcome === "invoice-not-found") throw notFound("invoice", invoice.id);
  if ("takenBy" in outcome) return outcome;
  if (invoice.customer_id && outcome.failedCheck === checks.length - 1) {
    // The customer's claim failed (it is read only then, to say why): gone, or in another currency.
    const customer = await findCustomer(caller.projectId, invoice.customer_id);
    if (!customer) throw notFound("customer", invoice.customer_id);
    throw currencyMismatch(customer.id, customer.currency);
  }
  throw source.tokenId
    ? new ApiError(400, "request.token.not-chargeable", `Customer token ${source.tokenId} cannot be charged.`)
    : notFound("card", source.cardId);
}

/**
 * Calls the connector for a held authorization and settles its outcome. An attempt that moved no
 * money (a soft decline, or nothing done) moves the payment to the next configuration of its chain
 * when the cascade's rules allow it (`cascade.ts`): the attempt is recorded and the next one
 * reserved in one write, and this request goes on with it. Each attempt counts for its
 * configuration's breaker.
 */
async function runAuthorization(
  request: PaymentRequest,
  invoice: Invoice,
  start: VersionedTransaction,
  source: Source,
  scheme: string | null,
  options: Pick<AuthorizeOptions, "initiator" | "capture" | "dropLiabilityShift" | "overrideMacBlocking">,
  mode: AuthorizeMode,
  firstProbe: boolean,
): Promise<AuthorizeResult> {
  const { caller } = request;
  const { initiator } = options;
  // Scheduled before any money moves, so that no crash can leave an authorization without its
  // automatic capture: the schedule is idempotent (named after the invoice) and its job captures
  // only an authorized transaction whose `auto_capture_at` is reached.
  if (mode === "authorize") await scheduleAutoCapture(start.record, caller.environment);
  const card = await cardCredentials(source.card, source.secrets);
  const health: Promise<void>[] = [];
  const tried = new Set<string>();
  const declinedNow: string[] = [];
  let held = start;
  let probe = firstProbe;
  try {
    for (;;) {
      const { record } = held;
      const pending = record.pending as PendingOperation;
      const configurationId = record.gateway_configuration_id;
      tried.add(configurationId);
      const connector = await connectorFor(record);
      const began = performance.now();
      let result: CallResult<RecordedOutcome>;
      try {
        result = await callConnector(connector, held, "authorization", () =>
          cardOperations(connector, record).authorize({
            scope: caller.projectId,
            reference: pending.id,
            amount: pending.amount,
            currency: record.currency,
            card,
            incremental: record.incremental,
            initiator,
            scheme,
            threeDS: threeDSContextOf(record),
            // A merchant-initiated payment names the card's first customer-initiated one at the scheme.
            networkTransactionId:
              initiator === "merchant" ? (source.card.network_transaction_id ?? null) : null,
          }),
        );
      } catch (error) {
        // No answer (the reservation stays for `lookup`): a fault of the provider, never cascaded.
        health.push(countHealth(configurationId, false, probe));
        throw error;
      }
      const now = nowIn(caller.environment);
      // The breaker's count goes beside the write that follows (the settlement or the cascade's).
      const count = () => health.push(countHealth(configurationId, answered(result), probe));
      const attempt = providerAttemptOf(
        record,
        "notDone" in result ? result : result.outcome,
        performance.now() - began,
        now,
      );
      const explanation = record.routing;
      const why = explanation
        ? noCascade(record, result, {
            attemptsMade: tried.size,
            explanation,
            dropLiabilityShift: options.dropLiabilityShift,
            overrideMacBlocking: options.overrideMacBlocking,
            scheme: source.card,
            declinedNow: attempt.outcome === "declined" ? [...declinedNow, attempt.at] : declinedNow,
            now,
          })
        : "not routed";
      const next =
        why === undefined && explanation ? await nextStep(caller.projectId, explanation, tried) : undefined;
      if (!next || !explanation) {
        const ended = {
          ...attempt,
          cascade: attempt.outcome === "approved" ? null : (why ?? "no configuration left in the chain"),
        };
        const settling = settled(
          { record: withAttempt(record, ended), version: held.version },
          result,
          connector,
        );
        count();
        return await settling;
      }
      // The cascade: this attempt recorded, the next configuration reserved, in one write.
      if (attempt.outcome === "declined") declinedNow.push(attempt.at);
      const failure = "notDone" in result ? result.notDone : (result.outcome as Declined);
      const moved = cascaded(
        record,
        { ...attempt, cascade: `to ${next.configurationId}` },
        failure,
        {
          configurationId: next.configurationId,
          name: next.name,
          ...(record.authentication
            ? { demand: "dropped" as const }
            : explanation.require_three_d_s
              ? { demand: "required" as const }
              : {}),
        },
        now,
      );
      // The decline's checks and its count for the card's scheme rules, as a settled one records
      // them (dropped if the card was anonymized meanwhile).
      const declined =
        "outcome" in result ? (result.outcome as Declined & { checks: CheckResults }) : undefined;
      const committing = commitSettlement(
        held,
        [
          transitionWrite(held, moved, { status: record.status, pending: pending.id }),
          ...attemptCountWrites(moved, pending),
        ],
        declined && record.card_id
          ? [
              cardCheckedWrite(
                caller.projectId,
                record.card_id,
                declined.checks,
                null,
                cardRetryRecord(declined, now),
              ),
            ]
          : [],
      );
      count();
      await committing;
      logger.info("Payment cascaded to the next gateway configuration", {
        transaction_id: record.id,
        from: configurationId,
        to: next.configurationId,
        error_code: attempt.error_code,
      });
      held = { record: moved, version: held.version + 1 };
      probe = next.probe;
    }
  } finally {
    await Promise.all(health);
  }

  async function settled(
    current: VersionedTransaction,
    result: CallResult<RecordedOutcome>,
    connector: PaymentConnector,
  ): Promise<AuthorizeResult> {
    const action = "outcome" in result && result.outcome.status === "customer-action";
    // A capture with a source answers with its capture, unless the customer must act first.
    const answers = mode === "authorize" || action;
    const done = await settleAuthorization(
      { request, invoice, answers },
      current,
      result,
      connector,
      options.capture?.plan,
    );
    if (done.refusal) {
      // A capture chained to an approved authorization may fail alone: the authorization stands, and
      // so does its automatic capture.
      if (done.current.record.status !== "authorized") await cancelAutoCapture(done.current.record);
      throw done.refusal;
    }
    if (answers) return { answer: paymentReply(done.current.record) };
    return { current: done.current, captured: done.captured };
  }
}

/** Counts an attempt for its configuration's breaker: best effort, never failing the payment. */
function countHealth(configurationId: string, ok: boolean, probe: boolean): Promise<void> {
  return recordHealth(configurationId, ok, { probe }).catch((error) =>
    logger.warn("Counting a gateway call for its circuit breaker failed", {
      gateway_configuration_id: configurationId,
      error,
    }),
  );
}

/** The 3DS exchange offered with a reserved authorization, and the answer to its previous round. */
function threeDSContextOf(record: TransactionRecord): ThreeDSContext {
  const attempt = record.pending?.three_d_s;
  if (!attempt) throw new Error(`Authorization of ${record.id} was reserved without a 3DS exchange`);
  const demand = record.pending?.three_d_s_demand;
  // Dropped: another provider authenticated the cardholder; this one is asked for no authentication.
  if (demand === "dropped") return { ...threeDSContext(attempt, undefined, record.id), demand };
  // Authenticated before without paying, with this card through this configuration: kept.
  const before = record.authenticated;
  const authenticated =
    before &&
    before.status !== "not-applicable" &&
    before.gateway_configuration_id === record.gateway_configuration_id &&
    before.card_id === record.card_id &&
    before.token_id === record.token_id
      ? { authenticated: { status: before.status, reference: before.reference } }
      : {};
  return {
    ...authenticated,
    ...threeDSContext(
      attempt,
      record.authentication?.answer,
      record.id,
      record.authentication?.provider_state,
    ),
    ...(demand ? { demand } : {}),
  };
}
