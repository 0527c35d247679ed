import { cardCredentials } from "../cards/service.ts";
import { type ClockedEnvironment, nowIn } from "../clock.ts";
import { findCustomer } from "../customers/store.ts";
import { transactWrite } from "../db/transactions.ts";
import type { Initiator } from "../gateways/connector.ts";
import { cardGatewayConfiguration } from "../gateways/routing.ts";
import { ApiError, conflict, invalidField, notFound } from "../http/errors.ts";
import type { Reply } from "../http/reply.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { compareAmounts, toMinorUnits } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import { cancelAutoCapture, scheduleAutoCapture } from "./auto-capture.ts";
import {
  ATTEMPTS,
  callConnector,
  cardOperations,
  challengeUrl,
  checkAmount,
  concurrentChange,
  connectorFor,
  inProgress,
  invoiceOf,
  type PaymentRequest,
  paymentReply,
  recordedDecline,
  resolveAbandoned,
  settleOutcome,
  takeOver,
  transactionOf,
} from "./core.ts";
import { authorizeInput } from "./schema.ts";
import { currencyMismatch, customerCurrencyClaim, resolveSource, type Source } from "./sources.ts";
import { commitTransition, insertTransaction, transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  CAPTURE_WINDOW_MS,
  leaseExpired,
  newTransaction,
  type PendingOperation,
  reserved,
} from "./transaction.ts";

/**
 * Authorization: the first step of every card payment, by itself (`POST /invoices/{id}/authorize`)
 * or as the implicit first step of a capture with a source. The invoice's one transaction is created
 * already reserved for its authorization, in the same DynamoDB transaction that links the invoice
 * to it on the condition that it has none yet (so concurrent authorizations make one transaction).
 */

/** How an authorization is answered: by itself, or as the first step of a capture. */
export type AuthorizeMode = "authorize" | "capture";

export type AuthorizeResult = { current: VersionedTransaction } | { answer: Reply };

export interface AuthorizeOptions {
  sourceId: string;
  incremental: boolean;
  metadata: Record<string, string>;
  initiator: Initiator;
  /** Only with authorize; fixed by the request that creates the transaction. */
  autoCaptureAt?: string | null;
  autoCaptureAmount?: string | null;
}

/** Whether the sandbox connector accepts incremental authorizations (it does). */
const CONNECTOR_SUPPORTS_INCREMENTS = true;

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
  if (!fields.source) throw invalidField("source", "is required", "missing-source");
  const autoCaptureAt = fields.auto_capture_at
    ? checkAutoCaptureAt(fields.auto_capture_at, request.caller.environment)
    : null;
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
      initiator: "merchant",
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

/**
 * Brings the invoice's transaction to `authorized` with `options.sourceId` (or answers the customer
 * action the issuer asks for). A transaction already past its authorization is returned as it is.
 */
export async function authorizeStep(
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
      return runAuthorization(request, known, created.held, source, options.initiator, mode);
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
      if (!leaseExpired(pending)) throw inProgress(record.id);
      // An abandoned attempt is settled from what the gateway recorded; then this request goes on
      // from where that leaves the transaction.
      const held = await takeOver(current);
      if (held) await resolveAbandoned({ request, invoice: known, answers: false }, held);
      continue;
    }
    if (record.challenge?.result === null) {
      // The customer has not answered the challenge yet: the same action again.
      const reply = paymentReply(record);
      await transactWrite(request.commit(reply));
      return { answer: reply };
    }
    const next = reserved(record, "authorization", record.amount, request.requestKey);
    const outcome = await commitTransition([
      transitionWrite(current, next, { status: "waiting", pending: null }),
    ]);
    if (outcome === "committed")
      return runAuthorization(
        request,
        known,
        { record: next, version: current.version + 1 },
        source,
        options.initiator,
        mode,
      );
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
      paymentMethod: "card",
      gateway: { configurationId: gateway.id, name: gateway.gateway_name },
      incremental: options.incremental,
      autoCaptureAt: options.autoCaptureAt ?? null,
      autoCaptureAmount: options.autoCaptureAmount ?? null,
      metadata: options.metadata,
      requestKey: request.requestKey,
    },
    nowIn(caller.environment),
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

/** Calls the connector for a held authorization and settles its outcome. */
async function runAuthorization(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  source: Source,
  initiator: Initiator,
  mode: AuthorizeMode,
): Promise<AuthorizeResult> {
  const { caller } = request;
  const { record } = held;
  const pending = record.pending as PendingOperation;
  // Scheduled before any money moves, so that no crash can leave an authorization without its
  // automatic capture: the schedule is idempotent (named after the invoice) and its job captures
  // only an authorized transaction whose `auto_capture_at` is reached.
  if (mode === "authorize") await scheduleAutoCapture(record, caller.environment);
  const connector = await connectorFor(record);
  const card = await cardCredentials(source.card, source.secrets);
  const result = await callConnector(connector, held, "authorization", () =>
    cardOperations(connector, record).authorize({
      scope: caller.projectId,
      reference: pending.id,
      amount: pending.amount,
      currency: record.currency,
      card,
      incremental: record.incremental,
      initiator,
      threeDS: {
        challengeUrl: challengeUrl(pending.challenge_token ?? ""),
        challengeResult: record.challenge?.result ?? undefined,
      },
    }),
  );
  const action = "outcome" in result && result.outcome.status === "customer-action";
  // A capture with a source answers itself once the authorization is done, unless the customer
  // must act first.
  const answers = mode === "authorize" || action;
  const settled = await settleOutcome({ request, invoice, answers }, held, result);
  if (settled.refusal) {
    await cancelAutoCapture(settled.current.record);
    throw settled.refusal;
  }
  if (answers) return { answer: paymentReply(settled.current.record) };
  return { current: settled.current };
}
