import { routingScheme } from "../cards/card.ts";
import { cardCredentials } from "../cards/service.ts";
import { nowIn } from "../clock.ts";
import { transactWrite } from "../db/transactions.ts";
import type { CardOperations, PaymentConnector, ThreeDSRoundAnswer } from "../gateways/connector.ts";
import { configurationById, connectorOf } from "../gateways/routing.ts";
import { conflict, invalidField } from "../http/errors.ts";
import type { Reply } from "../http/reply.ts";
import { sharedUlidId } from "../ids.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { cardEntryWrites } from "../search/entries.ts";
import { relationOf, roundAnswer, threeDSContext } from "../three-d-s/exchange.ts";
import type { ThreeDSAnswer } from "../three-d-s/gateway-request.ts";
import { parseInput } from "../validation/parse.ts";
import {
  type AuthorizeOptions,
  cardPaymentOptions,
  insertCardTransaction,
  readPayment,
} from "./authorize.ts";
import { routed } from "./cascade.ts";
import {
  ATTEMPTS,
  callConnector,
  concurrentChange,
  inProgress,
  type PaymentRequest,
  paymentReply,
  takeOver,
  transactionOf,
  wrongState,
} from "./core.ts";
import { authenticateInput } from "./schema.ts";
import { resolveAbandonedAuthentication, settleAuthentication } from "./settle-extras.ts";
import { type PaymentRead, resolveSource, type Source } from "./sources.ts";
import { commitTransition, transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  leaseExpired,
  newTransaction,
  openRound,
  type PendingOperation,
  reserved,
  type TransactionRecord,
  threeDSAnswered,
} from "./transaction.ts";

/**
 * 3-D Secure without paying (`POST /invoices/{id}/three-d-s`, and `/authenticate`, the same
 * operation answered as authorize answers): the cardholder authenticates for the invoice with a card
 * (the same rounds as an authorization's: `shared/three-d-s/exchange.ts`), and nothing is reserved
 * with the issuer. The invoice's transaction is created for it (so its 3DS pages find it), stays
 * `waiting`, and keeps the result (`authenticated`); the authorization that follows with the same
 * card through the same configuration hands that result to the provider instead of asking again
 * (`ThreeDSContext.authenticated`); another card, or an authentication that failed, starts over
 * (`beforeAuthorization`).
 *
 * Every provider call sits between a reservation (`pending` of type `authentication`, a leased claim
 * taken by a conditional write) and its settlement, as a payment's do; an abandoned one is settled
 * from the provider's record by the recovery job (`resolveAbandonedAuthentication`).
 */

/** `POST /invoices/{invoice_id}/three-d-s` and `POST /invoices/{invoice_id}/authenticate` */
export async function authenticateInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(authenticateInput, input);
  const options = cardPaymentOptions(request, fields);
  const read = await readPayment(request, invoiceId, options);
  const record = await authenticationStep(request, read, options);
  const reply = paymentReply(record);
  await transactWrite(request.commit(reply));
  return reply;
}

/** A payment of an invoice paid out (`payout.ts`): its one transaction is the payout. */
export const paidOut = (invoiceId: string, transactionId: string) =>
  conflict("request.invoice.paid-out", `Invoice ${invoiceId} was paid out (transaction ${transactionId}).`);

/**
 * A transaction that so far only authenticated the cardholder: no authorization was ever attempted
 * (none recorded nor reserved), and it is no payout.
 */
export function isAuthenticationOnly(record: TransactionRecord): boolean {
  if (record.kind === "payout" || record.status !== "waiting") return false;
  if (record.pending && record.pending.type !== "authentication") return false;
  return (
    (record.attempts ?? []).length === 0 &&
    !record.operations.some((made) => made.type === "authorization") &&
    (record.pending?.type === "authentication" ||
      record.operations.some((made) => made.type === "three_d_s_check"))
  );
}

/** Whether the transaction authenticated the cardholder with this source (an authorization reuses it). */
function authenticatedWith(record: TransactionRecord, source: { cardId: string; tokenId: string | null }) {
  const done = record.authenticated;
  return done != null && done.card_id === source.cardId && done.token_id === source.tokenId;
}

/** The source a transaction is paid with is `source`. */
function sameSource(record: TransactionRecord, source: { cardId: string; tokenId: string | null }) {
  return record.card_id === source.cardId && record.token_id === source.tokenId;
}

/**
 * The transaction as an authentication leaves it for another card, or after a failed
 * authentication: a new exchange for `source`, nothing of the former one kept (its pages answer 404).
 */
function startedOver(record: TransactionRecord, source: Source): TransactionRecord {
  return {
    ...record,
    card_id: source.cardId,
    token_id: source.tokenId,
    authentication: null,
    authenticated: null,
    three_d_s_status: "not-applicable",
    error_code: null,
    error_message: null,
  };
}

/**
 * Before an authorization of a transaction that only authenticated so far: an abandoned
 * authentication is settled first; another card or a failed authentication starts over (the
 * authorization then runs 3DS itself); and the authorization's own options (`incremental`,
 * `auto_capture_at`, `metadata`), which a transaction takes from the request that creates it, are
 * the authorization's. The record returned is written by the authorization's reservation, on the
 * version read.
 */
export async function beforeAuthorization(
  request: PaymentRequest,
  invoice: Invoice,
  start: VersionedTransaction,
  source: Source,
  options: AuthorizeOptions,
): Promise<VersionedTransaction> {
  let current = start;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) current = (await transactionOf(request.caller, invoice)) as VersionedTransaction;
    if (!isAuthenticationOnly(current.record)) return current;
    const { record } = current;
    if (record.pending) {
      if (!leaseExpired(record.pending)) throw inProgress(record.id);
      const held = await takeOver(current);
      if (held) await resolveAbandonedAuthentication({ request, invoice, answers: false }, held);
      continue;
    }
    const restart = !sameSource(record, source) || record.three_d_s_status === "failed";
    const base = restart ? startedOver(record, source) : record;
    const next: TransactionRecord = {
      ...base,
      incremental: options.incremental,
      auto_capture_at: options.autoCaptureAt ?? null,
      auto_capture_amount: options.autoCaptureAmount ?? null,
      metadata: { ...record.metadata, ...options.metadata },
    };
    return { record: next, version: current.version };
  }
  throw concurrentChange(start.record.id);
}

/**
 * Brings the invoice's authentication as far as the cardholder allows: a new exchange, the next
 * round, or where it stands (an open round's action again; the result once authenticated).
 */
async function authenticationStep(
  request: PaymentRequest,
  read: PaymentRead,
  options: AuthorizeOptions,
): Promise<TransactionRecord> {
  const { caller } = request;
  let known = read.payment.invoice;
  let current = read.payment.current;
  const source = options.answer
    ? undefined
    : await (read.source ?? resolveSource(caller, known, options.sourceId));
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) current = await transactionOf(caller, known);
    if (!current) {
      if (!source)
        throw invalidField(
          "source",
          `answers no 3DS step: invoice ${known.id} has no 3-D Secure authentication`,
        );
      const created = await createForAuthentication(request, known, source, options);
      if ("takenBy" in created) {
        known = { ...known, transaction_id: created.takenBy };
        continue;
      }
      return runAuthentication(request, known, created, source, options);
    }
    known = { ...known, transaction_id: current.record.id };
    const next = await nextAuthentication(request, known, current, source, options);
    if (next === "again") continue;
    if ("answer" in next) return next.answer;
    const paying =
      source ??
      (await resolveSource(caller, known, next.held.record.token_id ?? next.held.record.card_id ?? ""));
    return runAuthentication(request, known, next.held, paying, options);
  }
  throw concurrentChange(known.transaction_id ?? known.id);
}

/**
 * Where an existing transaction's authentication goes from here: answered as it stands, an
 * abandoned attempt settled first ("again"), or the next attempt reserved (a restart for another
 * card or after a failure; the next round with the answer given).
 */
async function nextAuthentication(
  request: PaymentRequest,
  invoice: Invoice,
  current: VersionedTransaction,
  source: Source | undefined,
  options: AuthorizeOptions,
): Promise<{ answer: TransactionRecord } | { held: VersionedTransaction } | "again"> {
  const { record } = current;
  if (!isAuthenticationOnly(record)) {
    // Paid, being paid, or paid out: 3-D Secure runs within its payment now.
    throw wrongState(record, "authenticated without a payment (it is being paid or was)");
  }
  if (record.pending) {
    if (!leaseExpired(record.pending)) throw inProgress(record.id);
    const held = await takeOver(current);
    if (held) await resolveAbandonedAuthentication({ request, invoice, answers: false }, held);
    return "again";
  }
  let answer: ThreeDSRoundAnswer | undefined;
  let base = record;
  if (options.answer) {
    const relation = relationOf(record.authentication, options.answer, `invoice ${invoice.id}`);
    if (relation === "replay" || !openRound(record)) return { answer: record };
    answer = roundAnswer(options.answer as ThreeDSAnswer);
  } else {
    const given = source as Source;
    const restart = !sameSource(record, given) || record.three_d_s_status === "failed";
    if (restart) base = startedOver(record, given);
    else if (authenticatedWith(record, given) || (openRound(record) && !record.authentication?.answer))
      return { answer: record };
  }
  const withAnswer = answer ? threeDSAnswered(base, answer) : base;
  const next = reserved(withAnswer, "authentication", record.amount, request.requestKey, {
    channel: options.channel,
  });
  const outcome = await commitTransition([
    transitionWrite(current, next, { status: "waiting", pending: null }),
    // Started over with another card: that card's search entry (the former one no longer matches).
    ...(base !== record ? cardEntryWrites(next, (source as Source).card) : []),
  ]);
  return outcome === "committed" ? { held: { record: next, version: current.version + 1 } } : "again";
}

/** The invoice's transaction, created reserved for its first authentication. */
async function createForAuthentication(
  request: PaymentRequest,
  invoice: Invoice,
  source: Source,
  options: AuthorizeOptions,
): Promise<VersionedTransaction | { takenBy: string }> {
  const { caller } = request;
  const id = sharedUlidId("transaction", invoice.id);
  const route = await routed(caller, invoice, source, options, id);
  authenticationOf(await connectorOf(await configurationById(caller.projectId, route.first.configurationId)));
  const created = newTransaction(
    {
      projectId: caller.projectId,
      sandbox: caller.sandbox,
      invoice,
      source,
      paymentMethod: "card",
      gateway: { configurationId: route.first.configurationId, name: route.first.name },
      routing: route.explanation,
      incremental: options.incremental,
      autoCaptureAt: null,
      autoCaptureAmount: null,
      metadata: options.metadata,
      requestKey: request.requestKey,
      channel: options.channel,
    },
    nowIn(caller.environment),
  );
  const record = reserved(
    { ...created, pending: null },
    "authentication",
    invoice.amount,
    request.requestKey,
    {
      channel: options.channel,
    },
  );
  return insertCardTransaction(caller, invoice, source, record);
}

/** The connector's authentication, or a 400 naming the configuration that cannot authenticate. */
function authenticationOf(connector: PaymentConnector): NonNullable<CardOperations["authenticate"]> {
  const authenticate = connector.card?.authenticate;
  if (!authenticate) {
    throw invalidField(
      "gateway_configuration_id",
      "goes to a gateway that cannot run 3-D Secure without a payment; authorize the invoice instead",
      "gateway-authentication-not-supported",
    );
  }
  return authenticate.bind(connector.card);
}

/** Calls the connector for a held authentication and settles what it answered. */
async function runAuthentication(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  source: Source,
  options: Pick<AuthorizeOptions, "initiator" | "preferredScheme">,
): Promise<TransactionRecord> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const connector = await connectorOf(
    await configurationById(record.project_id, record.gateway_configuration_id),
  );
  const authenticate = authenticationOf(connector);
  const card = await cardCredentials(source.card, source.secrets);
  const attempt = pending.three_d_s;
  if (!attempt) throw new Error(`Authentication of ${record.id} was reserved without a 3DS exchange`);
  const result = await callConnector(connector, held, "authentication", () =>
    authenticate({
      scope: record.project_id,
      reference: pending.id,
      amount: pending.amount,
      currency: record.currency,
      card,
      incremental: false,
      initiator: options.initiator,
      scheme: routingScheme(source.card, options.preferredScheme),
      threeDS: threeDSContext(
        attempt,
        record.authentication?.answer,
        record.id,
        record.authentication?.provider_state,
      ),
    }),
  );
  const settled = await settleAuthentication(request, invoice, held, result, true);
  if (settled.refusal) throw settled.refusal;
  return settled.record;
}
