import { randomBytes } from "node:crypto";
import type { Card, CardSecrets } from "../cards/card.ts";
import { cardCredentials, usableCard } from "../cards/service.ts";
import { cardCheckedWrite, cardUsableCheck, findCard } from "../cards/store.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { findCustomer } from "../customers/store.ts";
import { keys } from "../db/keys.ts";
import type { PageRequest } from "../db/listing.ts";
import { type TransactItem, transactWrite } from "../db/transactions.ts";
import { type EventName, eventWrites, type PendingEvent } from "../events/event.ts";
import { cardConnector } from "../gateways/configuration.ts";
import type { CardConnector, Declined, DeclineType } from "../gateways/connector.ts";
import { declineError } from "../gateways/errors.ts";
import { cardGatewayConfiguration } from "../gateways/store.ts";
import type { ApiRequest } from "../http/api.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, conflict, invalidField, notFound } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import { isId } from "../ids.ts";
import { type Invoice, presentInvoice } from "../invoices/invoice.ts";
import { findInvoice } from "../invoices/store.ts";
import { amountProblemIn, compareAmounts, isZeroAmount, toMinorUnits } from "../money.ts";
import { logger } from "../observability/logger.ts";
import { findEnvironment } from "../projects/environment.ts";
import { scheduler } from "../scheduling/index.ts";
import { type CaptureInvoiceJob, captureScheduleName } from "../scheduling/port.ts";
import { tokenFromItem } from "../tokens/store.ts";
import { isChargeable } from "../tokens/token.ts";
import { parseInput } from "../validation/parse.ts";
import { authorizeInput, captureInput, incrementInput, refundInput } from "./schema.ts";
import {
  challengePut,
  commitTransition,
  type Expected,
  findTokenItem,
  findTransactionRecord,
  insertTransaction,
  listTransactions,
  transitionWrite,
  type VersionedTransaction,
} from "./store.ts";
import {
  authorizationDeclined,
  authorizedWith,
  autoCaptureDue,
  awaitingChallenge,
  CAPTURE_WINDOW_MS,
  capturedWith,
  customerAction,
  followUpDeclined,
  incremented,
  leaseExpired,
  newRefund,
  newTransaction,
  type PendingOperation,
  type PendingType,
  presentTransaction,
  refundable,
  refunded,
  reserved,
  type TransactionRecord,
  takenOver,
  voided,
} from "./transaction.ts";

/**
 * Payments on invoices: authorize, capture, increment, void, refund. Each operation follows
 * reserve → provider call → settle (see `transaction.ts` for the states):
 *
 * 1. reserve: one conditional write claims the transaction for the operation (`pending`), so
 *    concurrent requests can never both call the provider for the same step;
 * 2. call the connector with the operation's stable reference;
 * 3. settle: one transaction writes the outcome, its events and the request's stored answer
 *    (`Idempotency-Key`), on the condition that the claim is still ours.
 *
 * A crash between 1 and 3 leaves the claim; once its lease is over, the next request takes it over
 * and repeats the provider call with the same reference, then settles. When that request is the
 * retry of the one that reserved (same operation, same amount, and for a refund the same
 * `Idempotency-Key`) the settlement is its answer; otherwise it settles the abandoned operation first
 * and then does its own.
 */
export interface PaymentRequest {
  caller: Caller;
  /** The request's `Idempotency-Key`, if it has one. */
  requestKey: string | null;
  /** The writes that store the request's answer with the state change that produces it. */
  commit: (reply: Reply) => TransactItem[];
}

/** The payment view of an HTTP request. */
export function paymentRequest(request: ApiRequest): PaymentRequest {
  return {
    caller: request.caller,
    requestKey: request.idempotencyKey ?? null,
    commit: (reply) => request.commitWith(reply),
  };
}

export type CustomerActionBody = ReturnType<typeof customerAction>;

/** Attempts of a request that keeps meeting concurrent changes of the same transaction. */
const ATTEMPTS = 4;
/** Whether the sandbox connector accepts incremental authorizations (it does). */
const CONNECTOR_SUPPORTS_INCREMENTS = true;

const inProgress = (id: string) =>
  conflict(
    "request.transaction.operation-in-progress",
    `Another operation on transaction ${id} is in progress; retry later.`,
  );
const concurrentChange = (id: string) =>
  conflict("request.transaction.concurrent-update", `Transaction ${id} is being changed by another request.`);
const wrongState = (record: TransactionRecord, action: string) =>
  conflict(
    "request.transaction.invalid-state",
    `Transaction ${record.id} is ${record.status}: it cannot be ${action}.`,
  );

export function challengeUrl(token: string): string {
  return `${config.apiUrl}/3ds/${token}`;
}

// ─── Reading ────────────────────────────────────────────────────────────────────────────────────

async function invoiceOf(caller: Caller, id: string): Promise<Invoice> {
  const found = isId("invoice", id) ? await findInvoice(caller.projectId, id) : undefined;
  if (!found) throw notFound("invoice", id);
  return found.invoice;
}

async function transactionOf(caller: Caller, invoice: Invoice): Promise<VersionedTransaction | undefined> {
  if (invoice.transaction_id === null) return undefined;
  const found = await findTransactionRecord(caller.projectId, invoice.transaction_id);
  if (!found)
    throw new Error(`Invoice ${invoice.id} links to a missing transaction ${invoice.transaction_id}`);
  return found;
}

/** The invoice's transaction, which `action` needs: a 400 naming what to do when there is none yet. */
async function requiredTransactionOf(
  caller: Caller,
  invoice: Invoice,
  errorType: "request.invoice.not-authorized" | "request.invoice.not-captured",
  message: string,
): Promise<VersionedTransaction> {
  const current = await transactionOf(caller, invoice);
  if (!current) throw new ApiError(400, errorType, `Invoice ${invoice.id} ${message}`);
  return current;
}

export async function getTransaction(caller: Caller, id: string) {
  const found = isId("transaction", id) ? await findTransactionRecord(caller.projectId, id) : undefined;
  if (!found) throw notFound("transaction", id);
  return presentTransaction(found.record);
}

export async function invoiceTransaction(caller: Caller, invoiceId: string) {
  const current = await transactionOf(caller, await invoiceOf(caller, invoiceId));
  return current ? presentTransaction(current.record) : null;
}

export async function pageOfTransactions(caller: Caller, page: PageRequest) {
  const result = await listTransactions(caller.projectId, page);
  return { ...result, items: result.items.map(presentTransaction) };
}

export async function getRefund(caller: Caller, transactionId: string, refundId: string) {
  const transaction = await getTransaction(caller, transactionId);
  const refund = transaction.refunds.find((candidate) => candidate.id === refundId);
  if (!refund) throw notFound("refund", refundId);
  return refund;
}

// ─── Sources ────────────────────────────────────────────────────────────────────────────────────

interface Source {
  cardId: string;
  tokenId: string | null;
  card: Card;
  secrets: CardSecrets;
  /** Conditions for the write that records the payment: the source is still usable. */
  checks: TransactItem[];
}

/** A card id, or a customer token of the invoice's customer that can pay. */
async function resolveSource(caller: Caller, invoice: Invoice, sourceId: string): Promise<Source> {
  const scope = caller.projectId;
  if (isId("card", sourceId)) {
    const { card, secrets } = await usableCard(caller, sourceId);
    return { cardId: card.id, tokenId: null, card, secrets, checks: [cardUsableCheck(scope, card.id)] };
  }
  if (!isId("token", sourceId)) throw invalidField("source", "must be a card id or a customer token id");
  const customerId = invoice.customer_id;
  if (customerId === null) {
    throw invalidField(
      "source",
      "a customer token can pay only an invoice of its customer (the invoice has none)",
    );
  }
  const item = await findTokenItem(scope, customerId, sourceId);
  if (!item) throw notFound("token", sourceId);
  const token = tokenFromItem(item);
  const found = token.card_id ? await findCard(scope, token.card_id) : undefined;
  if (!found || !isChargeable(token, found.card) || found.secrets.number_sealed === null) {
    throw new ApiError(400, "request.token.not-chargeable", `Customer token ${sourceId} cannot be charged.`);
  }
  const tokenCheck: TransactItem = {
    ConditionCheck: {
      TableName: config.tableName,
      Key: keys.child(scope, customerId, "token", sourceId),
      ConditionExpression: "#card_id = :card AND #status IN (:success, :notRequested)",
      ExpressionAttributeNames: { "#card_id": "card_id", "#status": "verification_status" },
      ExpressionAttributeValues: {
        ":card": found.card.id,
        ":success": "success",
        ":notRequested": "not-requested",
      },
    },
  };
  return {
    cardId: found.card.id,
    tokenId: sourceId,
    card: found.card,
    secrets: found.secrets,
    checks: [tokenCheck, cardUsableCheck(scope, found.card.id)],
  };
}

/**
 * The claim of the customer's currency by its first paid invoice: set when unset, and otherwise the
 * invoice must be in it. It commits with the transaction's creation, so two first invoices of one
 * customer in different currencies cannot both be paid.
 */
function customerCurrencyClaim(caller: Caller, customerId: string, currency: string): TransactItem {
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.resource(caller.projectId, customerId),
      UpdateExpression: "SET #currency = :currency",
      ConditionExpression:
        "#type = :customer AND (attribute_not_exists(#currency) OR attribute_type(#currency, :null) OR #currency = :currency)",
      ExpressionAttributeNames: { "#currency": "currency", "#type": "type" },
      ExpressionAttributeValues: { ":currency": currency, ":customer": "customer", ":null": "NULL" },
    },
  };
}

const currencyMismatch = (customerId: string, currency: string | null) =>
  new ApiError(
    400,
    "request.customer.currency-mismatch",
    `Customer ${customerId} pays in ${currency ?? "another currency"}: it cannot pay an invoice in another currency.`,
  );

// ─── Events and answers ─────────────────────────────────────────────────────────────────────────

function events(invoice: Invoice, record: TransactionRecord, names: EventName[]): PendingEvent[] {
  const data = {
    invoice: presentInvoice({ ...invoice, transaction_id: record.id }),
    transaction: presentTransaction(record),
  };
  return names.map((name) => ({ name, data }));
}

function paymentReply(record: TransactionRecord): Reply {
  return ok({
    transaction: presentTransaction(record),
    customer_action: customerAction(record, challengeUrl),
  });
}

function recordedDecline(record: TransactionRecord): ApiError {
  const declined: Declined = {
    status: "declined",
    errorType: (record.error_code ?? "card.declined") as DeclineType,
    message: record.error_message ?? "The payment was declined.",
  };
  return declineError(declined);
}

async function connectorFor(caller: Caller): Promise<CardConnector> {
  return cardConnector(await cardGatewayConfiguration(caller.projectId));
}

/** Commits a settlement; a card anonymized meanwhile only loses its optional check write. */
async function settle(
  held: VersionedTransaction,
  items: TransactItem[],
  optional: TransactItem[] = [],
): Promise<void> {
  let outcome = await commitTransition([...items, ...optional]);
  if (typeof outcome === "object" && outcome.failedCheck >= items.length)
    outcome = await commitTransition(items);
  if (outcome === "changed") throw inProgress(held.record.id);
  if (outcome !== "committed") throw new Error(`Settling transaction ${held.record.id} failed a condition`);
}

// ─── Authorization ──────────────────────────────────────────────────────────────────────────────

/** How an authorization is answered: by itself, as the first step of a capture, or not at all. */
type AuthorizeMode = "authorize" | "capture" | "recover";

type AuthorizeResult = { current: VersionedTransaction } | { answer: Reply };

interface AuthorizeOptions {
  sourceId: string;
  incremental: boolean;
  metadata: Record<string, string>;
  /** Only with authorize; fixed by the request that creates the transaction. */
  autoCaptureAt?: string | null;
  autoCaptureAmount?: string | null;
}

/** `auto_capture_at` must fall after now and within the capture window of an authorization made now. */
function checkAutoCaptureAt(at: string): string {
  const due = Date.parse(at);
  const now = clock.now().getTime();
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
  if (!fields.source) throw invalidField("source", "is required", "missing-source");
  const autoCaptureAt = fields.auto_capture_at ? checkAutoCaptureAt(fields.auto_capture_at) : null;
  if (fields.capture_amount && !autoCaptureAt)
    throw invalidField("capture_amount", "applies only with auto_capture_at");
  const invoice = await invoiceOf(request.caller, invoiceId);
  if (fields.capture_amount) {
    checkAmount("capture_amount", fields.capture_amount, invoice.currency);
    if (compareAmounts(fields.capture_amount, invoice.amount) > 0)
      throw invalidField("capture_amount", `must be at most the invoice's amount, ${invoice.amount}`);
  }
  const result = await authorizeStep(
    request,
    invoice,
    {
      sourceId: fields.source,
      incremental: fields.incremental ?? false,
      metadata: fields.metadata ?? {},
      autoCaptureAt,
      autoCaptureAmount: fields.capture_amount ?? null,
    },
    "authorize",
  );
  if ("answer" in result) return result.answer;
  const reply = paymentReply(result.current.record);
  await transactWrite(request.commit(reply));
  return reply;
}

async function authorizeStep(
  request: PaymentRequest,
  invoice: Invoice,
  options: AuthorizeOptions,
  mode: AuthorizeMode,
): Promise<AuthorizeResult> {
  const { caller } = request;
  const source = await resolveSource(caller, invoice, options.sourceId);
  let known = invoice;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await transactionOf(caller, known);
    if (!current) {
      const created = await createTransaction(request, known, source, options);
      if ("takenBy" in created) {
        known = { ...known, transaction_id: created.takenBy };
        continue;
      }
      return runAuthorization(request, known, created.held, source, mode);
    }
    const { record } = current;
    if (record.card_id !== source.cardId || record.token_id !== source.tokenId) {
      throw conflict(
        "request.invoice.payment-attempted",
        `Invoice ${known.id} is being paid with another source (transaction ${record.id}).`,
      );
    }
    if (record.status === "failed") throw recordedDecline(record);
    if (record.status !== "waiting") return { current };
    const pending = record.pending;
    if (pending) {
      if (!leaseExpired(pending, clock.now())) throw inProgress(record.id);
      const held = await takeOver(current);
      if (held) return runAuthorization(request, known, held, source, mode);
      continue;
    }
    if (record.challenge?.result === null) {
      // The customer has not answered the challenge yet: the same action again.
      const reply = paymentReply(record);
      if (mode === "recover") return { current };
      await transactWrite(request.commit(reply));
      return { answer: reply };
    }
    const next = reserved(record, "authorization", record.amount, request.requestKey, clock.now());
    const outcome = await commitTransition([
      transitionWrite(current, next, { status: "waiting", pending: null }),
    ]);
    if (outcome === "committed")
      return runAuthorization(request, known, { record: next, version: current.version + 1 }, source, mode);
  }
  throw concurrentChange(known.transaction_id ?? known.id);
}

async function createTransaction(
  request: PaymentRequest,
  invoice: Invoice,
  source: Source,
  options: AuthorizeOptions,
): Promise<{ held: VersionedTransaction } | { takenBy: string }> {
  const { caller } = request;
  const customer = invoice.customer_id
    ? await findCustomer(caller.projectId, invoice.customer_id)
    : undefined;
  if (invoice.customer_id && !customer) throw notFound("customer", invoice.customer_id);
  if (customer?.currency && customer.currency !== invoice.currency)
    throw currencyMismatch(customer.id, customer.currency);
  if (options.incremental && !CONNECTOR_SUPPORTS_INCREMENTS) {
    throw invalidField("incremental", "the card gateway does not support incremental authorizations");
  }
  const gateway = await cardGatewayConfiguration(caller.projectId);
  const record = newTransaction(
    {
      projectId: caller.projectId,
      sandbox: caller.sandbox,
      invoice,
      source,
      gateway: { configurationId: gateway.id, name: gateway.gateway_name },
      incremental: options.incremental,
      autoCaptureAt: options.autoCaptureAt ?? null,
      autoCaptureAmount: options.autoCaptureAmount ?? null,
      metadata: options.metadata,
      requestKey: request.requestKey,
    },
    clock.now(),
  );
  // Fails early, before anything is written, for amounts beyond what conditions can compare.
  toMinorUnits(record.amount, record.currency);
  const checks = [...source.checks];
  if (invoice.customer_id) checks.push(customerCurrencyClaim(caller, invoice.customer_id, invoice.currency));
  const outcome = await insertTransaction(record, { incremental: CONNECTOR_SUPPORTS_INCREMENTS }, checks);
  if (outcome === "created") return { held: { record, version: 1 } };
  if (outcome === "invoice-not-found") throw notFound("invoice", invoice.id);
  if ("takenBy" in outcome) return outcome;
  if (invoice.customer_id && outcome.failedCheck === checks.length - 1) {
    throw currencyMismatch(invoice.customer_id, null);
  }
  throw source.tokenId
    ? new ApiError(400, "request.token.not-chargeable", `Customer token ${source.tokenId} cannot be charged.`)
    : notFound("card", source.cardId);
}

/** Claims an abandoned reservation again; undefined when another request was faster. */
async function takeOver(current: VersionedTransaction): Promise<VersionedTransaction | undefined> {
  const pending = current.record.pending as PendingOperation;
  const now = clock.now();
  const next = takenOver(current.record, now);
  const expected: Expected = {
    status: current.record.status,
    pending: null,
    takeover: { id: pending.id, now: now.getTime() },
  };
  const outcome = await commitTransition([transitionWrite(current, next, expected)]);
  return outcome === "committed" ? { record: next, version: current.version + 1 } : undefined;
}

/** Calls the connector for a held authorization and settles its outcome. */
async function runAuthorization(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  source: Source,
  mode: AuthorizeMode,
): Promise<AuthorizeResult> {
  const { caller } = request;
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const challengeToken = record.challenge?.token ?? randomBytes(24).toString("base64url");
  // Scheduled before any money moves, so that no crash can leave an authorization without its
  // automatic capture: the schedule is idempotent (named after the invoice) and its job captures
  // only an authorized transaction whose `auto_capture_at` is reached.
  if (mode === "authorize") await scheduleAutoCapture(record);
  const connector = await connectorFor(caller);
  const card = await cardCredentials(source.card, source.secrets);
  const outcome = await connector.authorize({
    reference: pending.id,
    amount: pending.amount,
    currency: record.currency,
    card,
    incremental: record.incremental,
    threeDS: {
      challengeUrl: challengeUrl(challengeToken),
      challengeResult: record.challenge?.result ?? undefined,
    },
  });
  const now = clock.now();
  const expected: Expected = { status: "waiting", pending: pending.id };
  const scope = caller.projectId;
  const answers = mode === "authorize" || (mode === "capture" && outcome.status === "customer-action");

  if (outcome.status === "customer-action") {
    const next = awaitingChallenge(record, challengeToken);
    const reply = paymentReply(next);
    await settle(held, [
      transitionWrite(held, next, expected),
      ...(record.challenge ? [] : [challengePut(challengeToken, next)]),
      ...eventWrites(scope, events(invoice, next, ["invoice.pending"]), now),
      ...(answers ? request.commit(reply) : []),
    ]);
    return mode === "recover" ? { current: { record: next, version: held.version + 1 } } : { answer: reply };
  }
  const cardWrite = [cardCheckedWrite(scope, source.cardId, outcome.checks)];
  if (outcome.status === "declined") {
    const next = authorizationDeclined(record, outcome, outcome.threeDS, now);
    await settle(
      held,
      [
        transitionWrite(held, next, expected),
        ...eventWrites(scope, events(invoice, next, ["transaction.failed"]), now),
      ],
      cardWrite,
    );
    await cancelAutoCapture(next);
    if (mode === "recover") return { current: { record: next, version: held.version + 1 } };
    throw declineError(outcome);
  }
  const next = authorizedWith(record, outcome.gatewayReference, outcome.threeDS, now);
  const reply = paymentReply(next);
  await settle(
    held,
    [
      transitionWrite(held, next, expected),
      ...eventWrites(scope, events(invoice, next, ["transaction.authorized"]), now),
      ...(answers ? request.commit(reply) : []),
    ],
    cardWrite,
  );
  if (answers) return { answer: reply };
  return { current: { record: next, version: held.version + 1 } };
}

// ─── Follow-up operations ───────────────────────────────────────────────────────────────────────

/** `POST /invoices/{id}/capture` */
export async function captureInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(captureInput, input);
  const invoice = await invoiceOf(request.caller, invoiceId);
  if (fields.amount) checkAmount("amount", fields.amount, invoice.currency);
  let current: VersionedTransaction | undefined;
  if (fields.source) {
    const result = await authorizeStep(
      request,
      invoice,
      {
        sourceId: fields.source,
        incremental: fields.incremental ?? false,
        metadata: fields.metadata ?? {},
      },
      "capture",
    );
    if ("answer" in result) return result.answer;
    current = result.current;
  } else {
    current = await transactionOf(request.caller, invoice);
  }
  if (!current) {
    throw new ApiError(
      400,
      "request.invoice.not-authorized",
      `Invoice ${invoice.id} has no authorization to capture: send a source.`,
    );
  }
  if (current.record.status === "failed") throw recordedDecline(current.record);
  const record = await followUp(request, invoice, current, capturePlan(fields.amount ?? undefined));
  await cancelAutoCapture(record);
  return paymentReply(record);
}

function capturePlan(amount: string | undefined): FollowUpPlan {
  return {
    type: "capture",
    amount: (record) => amount ?? record.authorized_amount,
    allowed: (record) => {
      if (record.status !== "authorized") throw wrongState(record, "captured");
      const deadline = Date.parse(record.authorized_at ?? "") + CAPTURE_WINDOW_MS;
      if (clock.now().getTime() >= deadline) {
        throw conflict(
          "request.transaction.capture-window-expired",
          `The authorization of transaction ${record.id} is older than 7 days: it can no longer be captured.`,
        );
      }
    },
  };
}

/** `POST /invoices/{id}/void` */
export async function voidInvoice(request: PaymentRequest, invoiceId: string): Promise<Reply> {
  const invoice = await invoiceOf(request.caller, invoiceId);
  const current = await requiredTransactionOf(
    request.caller,
    invoice,
    "request.invoice.not-authorized",
    "has no authorization to void.",
  );
  const record = await followUp(request, invoice, current, {
    type: "void",
    amount: (record) => record.authorized_amount,
    allowed: (record) => {
      if (record.status !== "authorized") throw wrongState(record, "voided");
    },
  });
  await cancelAutoCapture(record);
  return ok({ transaction: presentTransaction(record) });
}

/** `POST /invoices/{id}/increment_authorization` */
export async function incrementInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(incrementInput, input);
  const invoice = await invoiceOf(request.caller, invoiceId);
  checkAmount("amount", fields.amount, invoice.currency);
  const current = await requiredTransactionOf(
    request.caller,
    invoice,
    "request.invoice.not-authorized",
    "has no authorization to increment.",
  );
  const record = await followUp(request, invoice, current, {
    type: "increment",
    amount: () => fields.amount,
    allowed: (record) => {
      if (!invoice.incremental)
        throw conflict(
          "request.invoice.not-incremental",
          `Invoice ${invoice.id} does not allow incremental authorizations.`,
        );
      if (!record.incremental) {
        throw conflict(
          "request.transaction.not-incremental",
          `Transaction ${record.id} was not authorized with incremental=true.`,
        );
      }
      if (record.status !== "authorized") throw wrongState(record, "incremented");
    },
  });
  return ok({ transaction: presentTransaction(record) });
}

/** `POST /invoices/{id}/refunds` */
export async function refundInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const invoice = await invoiceOf(request.caller, invoiceId);
  const current = await requiredTransactionOf(
    request.caller,
    invoice,
    "request.invoice.not-captured",
    "has no payment to refund.",
  );
  return refund(request, invoice, current, input);
}

/** `POST /transactions/{id}/refunds` */
export async function refundTransaction(
  request: PaymentRequest,
  transactionId: string,
  input: unknown,
): Promise<Reply> {
  const current = isId("transaction", transactionId)
    ? await findTransactionRecord(request.caller.projectId, transactionId)
    : undefined;
  if (!current) throw notFound("transaction", transactionId);
  return refund(request, await invoiceOf(request.caller, current.record.invoice_id), current, input);
}

async function refund(
  request: PaymentRequest,
  invoice: Invoice,
  current: VersionedTransaction,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(refundInput, input);
  if (fields.amount) checkAmount("amount", fields.amount, invoice.currency);
  const now = clock.now();
  const record = await followUp(request, invoice, current, {
    type: "refund",
    amount: (record) => fields.amount ?? refundable(record),
    allowed: (record, amount) => {
      if (record.status !== "completed") throw wrongState(record, "refunded");
      if (compareAmounts(amount, refundable(record)) > 0) {
        throw invalidField(
          "amount",
          `must be at most ${refundable(record)}, what is left to refund`,
          "invalid-amount",
        );
      }
    },
    refund: (record, amount) =>
      newRefund(
        record,
        {
          amount,
          reason: fields.reason ?? null,
          information: fields.information ?? null,
          metadata: fields.metadata ?? {},
        },
        now,
      ),
  });
  const made = record.refunds.at(-1);
  return ok({ refund: made, transaction: presentTransaction(record) });
}

function checkAmount(field: string, amount: string, currency: string): void {
  const problem = amountProblemIn(amount, currency);
  if (problem) throw invalidField(field, problem);
  if (isZeroAmount(amount)) throw invalidField(field, "must be above zero");
}

interface FollowUpPlan {
  type: Exclude<PendingType, "authorization">;
  amount: (record: TransactionRecord) => string;
  /** Throws the refusal when the operation is not allowed on the transaction as it is. */
  allowed: (record: TransactionRecord, amount: string) => void;
  refund?: (record: TransactionRecord, amount: string) => ReturnType<typeof newRefund>;
}

/** Whether an abandoned reservation is this very request's own, made before it crashed. */
function isOwnOperation(
  pending: PendingOperation,
  plan: FollowUpPlan,
  amount: string,
  requestKey: string | null,
): boolean {
  if (pending.type !== plan.type || compareAmounts(pending.amount, amount) !== 0) return false;
  return plan.type !== "refund" || (requestKey !== null && pending.request_key === requestKey);
}

/** Reserve → call → settle for a capture, void, increment or refund, answering the request. */
async function followUp(
  request: PaymentRequest,
  invoice: Invoice,
  start: VersionedTransaction,
  plan: FollowUpPlan,
): Promise<TransactionRecord> {
  let current = start;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { record } = current;
    const now = clock.now();
    const pending = record.pending;
    if (pending) {
      // An unfinished authorization is finished by the retry of authorize or capture (which hold the card).
      if (!leaseExpired(pending, now) || pending.type === "authorization") throw inProgress(record.id);
      const held = await takeOver(current);
      if (held) {
        const amount = plan.amount(record);
        const own = isOwnOperation(pending, plan, amount, request.requestKey);
        const settled = await finishAbandoned(request, invoice, held, own);
        if (own) return settled;
      }
      current = await reread(request.caller, record.id);
      continue;
    }
    const amount = plan.amount(record);
    plan.allowed(record, amount);
    const next = reserved(
      record,
      plan.type,
      amount,
      request.requestKey,
      now,
      plan.refund?.(record, amount) ?? null,
    );
    const minor = Number(toMinorUnits(amount, record.currency));
    const expected: Expected = {
      status: record.status,
      pending: null,
      ...(plan.type === "capture" ? { capture: { now: now.getTime(), minor } } : {}),
      ...(plan.type === "refund" ? { refund: { minor } } : {}),
    };
    const outcome = await commitTransition([transitionWrite(current, next, expected)]);
    if (outcome === "committed") {
      return callAndSettle(request, invoice, { record: next, version: current.version + 1 }, true);
    }
    current = await reread(request.caller, record.id);
  }
  throw concurrentChange(start.record.id);
}

async function reread(caller: Caller, id: string): Promise<VersionedTransaction> {
  const found = await findTransactionRecord(caller.projectId, id);
  if (!found) throw notFound("transaction", id);
  return found;
}

/** Finishes an operation whose holder is gone; it answers the request only when it is its own. */
async function finishAbandoned(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  own: boolean,
): Promise<TransactionRecord> {
  if (own) return callAndSettle(request, invoice, held, true);
  try {
    return await callAndSettle(request, invoice, held, false);
  } catch (error) {
    // The abandoned operation's decline is recorded; it is not this request's answer.
    if (error instanceof ApiError && error.status === 410) return held.record;
    if (error instanceof ApiError && error.errorType === "gateway.declined") return held.record;
    throw error;
  }
}

const FOLLOW_UP_EVENTS: Record<Exclude<PendingType, "authorization">, EventName[]> = {
  capture: ["transaction.captured", "invoice.completed"],
  void: ["transaction.voided"],
  refund: ["transaction.refunded"],
  increment: ["transaction.authorized"],
};

/** Calls the connector for a held follow-up operation and settles its outcome. */
async function callAndSettle(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  answers: boolean,
): Promise<TransactionRecord> {
  const { caller } = request;
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const type = pending.type as Exclude<PendingType, "authorization">;
  const connector = await connectorFor(caller);
  const gatewayReference = record.gateway_reference ?? "";
  const followUpRequest = {
    gatewayReference,
    amount: pending.amount,
    currency: record.currency,
    reference: pending.id,
  };
  const outcome =
    type === "capture"
      ? await connector.capture(followUpRequest)
      : type === "void"
        ? await connector.void({ gatewayReference, reference: pending.id })
        : type === "refund"
          ? await connector.refund(followUpRequest)
          : await connector.incrementAuthorization(followUpRequest);
  const now = clock.now();
  const expected: Expected = { status: record.status, pending: pending.id };
  const scope = caller.projectId;
  if (outcome.status === "declined") {
    const next = followUpDeclined(record, outcome, now);
    const names: EventName[] = type === "capture" ? ["transaction.failed"] : [];
    await settle(held, [
      transitionWrite(held, next, expected),
      ...eventWrites(scope, events(invoice, next, names), now),
    ]);
    throw declineError(outcome);
  }
  const next =
    type === "capture"
      ? capturedWith(record, "chargedBack" in outcome && outcome.chargedBack === true, now)
      : type === "void"
        ? voided(record, now)
        : type === "refund"
          ? refunded(record, now)
          : incremented(record, now);
  const reply =
    type === "refund"
      ? ok({ refund: next.refunds.at(-1), transaction: presentTransaction(next) })
      : type === "capture"
        ? paymentReply(next)
        : ok({ transaction: presentTransaction(next) });
  await settle(held, [
    transitionWrite(held, next, expected),
    ...eventWrites(scope, events(invoice, next, FOLLOW_UP_EVENTS[type]), now),
    ...(answers ? request.commit(reply) : []),
  ]);
  return next;
}

// ─── Automatic capture (`auto_capture_at`) ──────────────────────────────────────────────────────

function autoCaptureJob(record: TransactionRecord): CaptureInvoiceJob {
  return { kind: "capture-invoice", scope: record.project_id, invoiceId: record.invoice_id };
}

/** Schedules the capture of the transaction at its `auto_capture_at` (idempotent; none without). */
async function scheduleAutoCapture(record: TransactionRecord): Promise<void> {
  if (record.auto_capture_at === null) return;
  await scheduler().schedule({
    name: captureScheduleName(record.invoice_id),
    at: new Date(record.auto_capture_at),
    job: autoCaptureJob(record),
  });
}

/**
 * Drops the automatic capture of a transaction that was captured, voided or declined. Best effort:
 * the state change is done and answered whatever happens here, and a schedule left behind fires a
 * job that finds nothing to capture.
 */
async function cancelAutoCapture(record: TransactionRecord): Promise<void> {
  if (record.auto_capture_at === null) return;
  try {
    await scheduler().cancel(captureScheduleName(record.invoice_id));
  } catch (error) {
    logger.warn("Could not cancel the automatic capture; its job will find nothing to capture", {
      invoice_id: record.invoice_id,
      transaction_id: record.id,
      error,
    });
  }
}

export type AutoCaptureOutcome = "captured" | "already-captured" | "declined" | "nothing-to-capture";

/**
 * The scheduled job of `auto_capture_at`: captures the invoice's authorization, idempotently. An
 * already captured transaction is success; one voided, failed, never authorized, past its capture
 * window or without `auto_capture_at` is left as it is (logged); an operation in flight, or a job
 * that fired before its time, throws so that the scheduler runs it again later.
 */
export async function captureScheduled(job: CaptureInvoiceJob): Promise<AutoCaptureOutcome> {
  const context = { project_id: job.scope, invoice_id: job.invoiceId };
  const environment = await findEnvironment(job.scope);
  const found =
    environment && isId("invoice", job.invoiceId) ? await findInvoice(job.scope, job.invoiceId) : undefined;
  if (!environment || !found) {
    logger.warn("Automatic capture: no such invoice", context);
    return "nothing-to-capture";
  }
  const caller: Caller = { projectId: job.scope, sandbox: environment.sandbox, environment };
  const request: PaymentRequest = { caller, requestKey: null, commit: () => [] };
  const invoice = found.invoice;
  const current = await transactionOf(caller, invoice);
  if (!current) {
    logger.warn("Automatic capture: the invoice has no transaction", context);
    return "nothing-to-capture";
  }
  const outcome = classifyForAutoCapture(current.record);
  if (outcome !== "capture") return outcome;
  try {
    await followUp(request, invoice, current, capturePlan(current.record.auto_capture_amount ?? undefined));
    return "captured";
  } catch (error) {
    if (!(error instanceof ApiError) || error.errorType === "request.transaction.operation-in-progress")
      throw error;
    if (error.status === 409) {
      // Another request moved the transaction first (a capture or void): classify it as it is now.
      const now = await reread(caller, current.record.id);
      const settled = classifyForAutoCapture(now.record);
      if (settled === "capture") throw error;
      return settled;
    }
    // A decline, recorded on the transaction (failed) with its event: not retried.
    logger.warn("Automatic capture declined", { ...context, error_type: error.errorType });
    return "declined";
  }
}

function classifyForAutoCapture(record: TransactionRecord): AutoCaptureOutcome | "capture" {
  const context = { invoice_id: record.invoice_id, transaction_id: record.id, status: record.status };
  const due = autoCaptureDue(record, clock.now());
  if (due === "not-requested") {
    logger.warn("Automatic capture: the transaction did not ask for one", context);
    return "nothing-to-capture";
  }
  if (record.status === "completed" || record.status === "refunded") return "already-captured";
  // An abandoned follow-up operation is finished by the capture itself (see `followUp`); an
  // unfinished authorization only by the retry of authorize, which holds the card: wait for it.
  const pending = record.pending;
  if (pending && (pending.type === "authorization" || !leaseExpired(pending, clock.now())))
    throw inProgress(record.id);
  if (!due) throw new Error(`Automatic capture of ${record.id} ran before ${record.auto_capture_at}`);
  if (record.status !== "authorized") {
    logger.info("Automatic capture: nothing to capture", context);
    return "nothing-to-capture";
  }
  const deadline = Date.parse(record.authorized_at ?? "") + CAPTURE_WINDOW_MS;
  if (clock.now().getTime() >= deadline) {
    logger.warn("Automatic capture: the capture window is over", context);
    return "nothing-to-capture";
  }
  return "capture";
}
