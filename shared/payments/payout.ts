import { cardCredentials } from "../cards/service.ts";
import { nowIn } from "../clock.ts";
import type { Scope } from "../db/keys.ts";
import { transactWrite } from "../db/transactions.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import type { PaymentConnector } from "../gateways/connector.ts";
import { configurationById, configurationForPayment, connectorOf } from "../gateways/routing.ts";
import { cachedGatewaySetup } from "../gateways/store.ts";
import { ApiError, conflict, invalidField } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { rulesOf } from "../routing/store.ts";
import { cardEntryWrites } from "../search/entries.ts";
import { isGatewayRequest } from "../three-d-s/gateway-request.ts";
import { parseInput } from "../validation/parse.ts";
import {
  ATTEMPTS,
  callConnector,
  concurrentChange,
  inProgress,
  type PaymentRequest,
  recordedDecline,
  takeOver,
  transactionOf,
} from "./core.ts";
import { payoutInput } from "./schema.ts";
import { payoutReply, resolveAbandonedPayout, settlePayout } from "./settle-extras.ts";
import { paymentWithSource, type Source } from "./sources.ts";
import { commitTransition, insertTransaction, transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  leaseExpired,
  newTransaction,
  type PendingOperation,
  presentTransaction,
  reserved,
  type TransactionRecord,
} from "./transaction.ts";

/**
 * A payout to a card or a customer token (`POST /invoices/{id}/payout`): the invoice's amount is
 * credited to the cardholder (an original credit transaction: winnings, a refund without a prior
 * payment). It is the invoice's one transaction, of kind `payout`: created reserved for the payout in
 * the same DynamoDB transaction that links the invoice to it on the condition that it has none
 * (so an invoice paid, being paid, or paid out is refused with 409, and two payouts at once make
 * one), then the provider is called with the payout's reference, then the outcome is settled on the
 * condition that the reservation is still ours, with its event (`transaction.paid_out`, or
 * `transaction.failed` for a decline) and the request's stored answer. A payout the provider never
 * received is a failed attempt and may be asked again; an unknown outcome stays reserved (504) for
 * the recovery job, which settles it from the provider's record (`resolveAbandonedPayout`).
 *
 * Where it goes: `gateway_configuration_id` (with `force_gateway_configuration_id` or not: a payout
 * never moves to another configuration, as money sent twice cannot be taken back), else the first
 * enabled card configuration in the environment's default order whose gateway pays out to cards.
 */

/** `POST /invoices/{invoice_id}/payout` */
export async function payoutInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(payoutInput, input);
  if (!fields.source) throw invalidField("source", "is required", "missing-source");
  if (isGatewayRequest(fields.source))
    throw invalidField("source", "must be a card id or a customer token id");
  if (fields.force_gateway_configuration_id && !fields.gateway_configuration_id) {
    throw invalidField("gateway_configuration_id", "is required with force_gateway_configuration_id");
  }
  const { caller } = request;
  const read = await paymentWithSource(caller, invoiceId, fields.source);
  let known = read.payment.invoice;
  let current = read.payment.current;
  // The invoice's state first: an invoice paid or paid out answers 409 whatever the source.
  const first = current ? await settledFor(request, known, current.record) : undefined;
  if (first) return first;
  const source = await read.source;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) current = await transactionOf(caller, known);
    if (!current) {
      const target = await payoutTarget(caller.projectId, fields.gateway_configuration_id ?? null);
      const created = await createPayout(request, known, source, target.configuration, fields.metadata ?? {});
      if ("takenBy" in created) {
        known = { ...known, transaction_id: created.takenBy };
        continue;
      }
      return payOut(request, known, created, source, target.connector);
    }
    known = { ...known, transaction_id: current.record.id };
    const answer = await settledFor(request, known, current.record);
    if (answer) return answer;
    const { record } = current;
    if (record.card_id !== source.cardId || record.token_id !== source.tokenId) {
      throw conflict(
        "request.invoice.payment-attempted",
        `Invoice ${known.id} is being paid out to another source (transaction ${record.id}).`,
      );
    }
    if (record.pending) {
      if (!leaseExpired(record.pending)) throw inProgress(record.id);
      // Its holder crashed: settled from the provider's record first; this request goes on from there.
      const held = await takeOver(current);
      if (held) await resolveAbandonedPayout({ request, invoice: known, answers: false }, held);
      continue;
    }
    // An earlier attempt that moved nothing (the provider never received it): asked again.
    const next = reserved(record, "payout", record.amount, request.requestKey);
    const outcome = await commitTransition([
      transitionWrite(current, next, { status: "waiting", pending: null }),
    ]);
    if (outcome !== "committed") continue;
    const connector = await connectorOf(
      await configurationById(caller.projectId, record.gateway_configuration_id),
    );
    return payOut(
      request,
      known,
      { record: next, version: current.version + 1 },
      source,
      payoutOf(connector),
    );
  }
  throw concurrentChange(known.transaction_id ?? known.id);
}

/** `refuseTaken`, with the answer to this request's own retry stored under its `Idempotency-Key`. */
async function settledFor(
  request: PaymentRequest,
  invoice: Invoice,
  record: TransactionRecord,
): Promise<Reply | undefined> {
  const reply = refuseTaken(invoice, record, request);
  if (reply) await transactWrite(request.commit(reply));
  return reply;
}

/**
 * What an invoice's existing transaction says of a payout: a payment (made or under way) or a payout
 * made is a 409; the payout made for this very request (its retry with the same `Idempotency-Key`,
 * settled meanwhile) is its answer; a declined payout answers its decline again. Undefined: a payout
 * under way or not done, to go on with.
 */
function refuseTaken(
  invoice: Invoice,
  record: TransactionRecord,
  request: PaymentRequest,
): Reply | undefined {
  if (record.kind !== "payout") {
    throw conflict(
      "request.invoice.already-paid",
      `Invoice ${invoice.id} is paid or being paid (transaction ${record.id}): it cannot be paid out.`,
    );
  }
  if (record.status === "failed") throw recordedDecline(record);
  if (record.status === "completed") {
    const own =
      request.requestKey !== null &&
      record.operations.some(
        (made) => made.type === "payout" && made.success && made.request_key === request.requestKey,
      );
    if (own) return ok({ transaction: presentTransaction(record) });
    throw conflict(
      "request.invoice.paid-out",
      `Invoice ${invoice.id} was paid out (transaction ${record.id}).`,
    );
  }
  return undefined;
}

type PayoutCall = NonNullable<PaymentConnector["payout"]>;

function payoutOf(connector: PaymentConnector): PayoutCall {
  if (!connector.payout) throw new Error("The payout's gateway configuration no longer pays out");
  return connector.payout.bind(connector);
}

const cannotPayOut = (configuration: GatewayConfiguration) =>
  invalidField(
    "gateway_configuration_id",
    `names a ${configuration.gateway_name} configuration: that gateway cannot pay out to cards`,
    "gateway-payout-not-supported",
  );

/**
 * The configuration a payout goes through: the one named (of this environment, enabled, for cards,
 * and able to pay out: else a 4xx naming `gateway_configuration_id`), else the first enabled card
 * configuration in the default order whose gateway pays out.
 */
async function payoutTarget(
  scope: Scope,
  named: string | null,
): Promise<{ configuration: GatewayConfiguration; connector: PayoutCall }> {
  if (named) {
    const configuration = await configurationForPayment(scope, named, "card", "gateway_configuration_id");
    const connector = await connectorOf(configuration);
    if (!connector.payout) throw cannotPayOut(configuration);
    return { configuration, connector: payoutOf(connector) };
  }
  const setup = await cachedGatewaySetup(scope);
  const order = rulesOf(setup).default_order;
  const rank = (configuration: GatewayConfiguration) => {
    const position = order.indexOf(configuration.id);
    return position === -1 ? order.length : position;
  };
  const candidates = setup.configurations
    .filter((item) => item.payment_method === "card" && item.enabled && item.deleted_at === null)
    .sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : 1));
  for (const configuration of candidates) {
    const connector = await connectorOf(configuration);
    if (connector.payout) return { configuration, connector: payoutOf(connector) };
  }
  throw invalidField(
    "gateway_configuration_id",
    "is required: no enabled card gateway configuration of this environment can pay out to cards",
    "gateway-payout-not-supported",
  );
}

/** The invoice's transaction, of kind payout, created reserved for its payout. */
async function createPayout(
  request: PaymentRequest,
  invoice: Invoice,
  source: Source,
  configuration: GatewayConfiguration,
  metadata: Record<string, string>,
): Promise<VersionedTransaction | { takenBy: string }> {
  const { caller } = request;
  const created = newTransaction(
    {
      projectId: caller.projectId,
      sandbox: caller.sandbox,
      invoice,
      source,
      paymentMethod: "card",
      gateway: { configurationId: configuration.id, name: configuration.gateway_name },
      incremental: false,
      autoCaptureAt: null,
      autoCaptureAmount: null,
      metadata,
      requestKey: request.requestKey,
    },
    nowIn(caller.environment),
  );
  const record = reserved(
    { ...created, kind: "payout", pending: null },
    "payout",
    invoice.amount,
    request.requestKey,
  );
  const outcome = await insertTransaction(
    record,
    { incremental: false },
    source.checks,
    cardEntryWrites(record, source.card),
  );
  if (outcome === "created") return { record, version: 1 };
  if (outcome === "invoice-not-found")
    throw new ApiError(404, "resource.invoice.not-found", `The invoice ${invoice.id} could not be found.`);
  if ("takenBy" in outcome) return outcome;
  throw source.tokenId
    ? new ApiError(400, "request.token.not-chargeable", `Customer token ${source.tokenId} cannot be used.`)
    : new ApiError(404, "resource.card.not-found", `The card ${source.cardId} could not be found.`);
}

/** Calls the provider for a held payout and settles its outcome; a decline is the request's error. */
async function payOut(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  source: Source,
  connector: PayoutCall,
): Promise<Reply> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const card = await cardCredentials(source.card, source.secrets);
  const provider = await connectorOf(
    await configurationById(record.project_id, record.gateway_configuration_id),
  );
  const result = await callConnector(provider, held, "payout", () =>
    connector({
      scope: record.project_id,
      reference: pending.id,
      amount: pending.amount,
      currency: record.currency,
      card,
    }),
  );
  const settled = await settlePayout({ request, invoice, answers: true }, held, result);
  if (settled.refusal) throw settled.refusal;
  const reply = payoutReply(settled.record);
  return reply;
}
