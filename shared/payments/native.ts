import { nowIn } from "../clock.ts";
import { findCustomer } from "../customers/store.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { definitionOf } from "../gateways/configuration.ts";
import { parameterProblems } from "../gateways/native-apm.ts";
import { configurationForPayment } from "../gateways/routing.ts";
import type { Caller } from "../http/auth.ts";
import { conflict, notFound, validationFailed } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { toMinorUnits } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";
import {
  ATTEMPTS,
  callConnector,
  concurrentChange,
  connectorFor,
  inProgress,
  nativePaymentReply,
  type PaymentRequest,
  paymentOf,
  resolveAbandoned,
  settleOutcome,
  takeOver,
  transactionOf,
} from "./core.ts";
import { currencyMismatch, customerCurrencyClaim } from "./sources.ts";
import { commitTransition, insertTransaction, transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  leaseExpired,
  newTransaction,
  type PendingOperation,
  paymentMethodOf,
  presentTransaction,
  reserved,
  type TransactionRecord,
} from "./transaction.ts";

/**
 * Native APM payments (`POST /invoices/{id}/native-payment`, JSON): the customer's values for each
 * step go to the provider through the invoice's one transaction, by the same reserve → call →
 * settle discipline as card payments. The first step creates the transaction (paid through the
 * named configuration, no card); the provider asks for more (CUSTOMER_INPUT), confirms the payment
 * (PENDING_CAPTURE, `invoice.pending`), or refuses it (a failed attempt: the customer tries again).
 * The capture (`POST /invoices/{id}/capture` with `<configuration id>.<gateway>` as source) completes
 * it (`capture.ts`).
 */
export const nativePaymentInput = z.object({
  gateway_configuration_id: z.string("is required").check(z.minLength(1, "is required"), z.maxLength(200)),
  native_apm: z.optional(
    z.object({
      parameter_values: z.optional(z.record(z.string(), z.unknown(), "must be an object of values")),
    }),
  ),
});

/** The step a transaction is at: the first, or the values the provider asked for. */
function stepOf(record: TransactionRecord | undefined): "initial" | "customer-input" {
  return record?.native_apm?.state === "CUSTOMER_INPUT" ? "customer-input" : "initial";
}

function parametersOf(configuration: GatewayConfiguration, record: TransactionRecord | undefined) {
  if (stepOf(record) === "customer-input") return record?.native_apm?.parameters ?? [];
  return definitionOf(configuration).methods[configuration.payment_method]?.native_apm_parameters ?? [];
}

/** The invoice's transaction must be this configuration's native payment. */
function checkSamePayment(record: TransactionRecord, invoice: Invoice, configuration: GatewayConfiguration) {
  if (paymentMethodOf(record) !== "native-apm" || record.gateway_configuration_id !== configuration.id) {
    throw conflict(
      "request.invoice.payment-attempted",
      `Invoice ${invoice.id} is being paid another way (transaction ${record.id}).`,
    );
  }
}

/** `POST /invoices/{id}/native-payment` */
export async function nativePayment(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(nativePaymentInput, input);
  const { caller } = request;
  const payment = await paymentOf(caller, invoiceId);
  // A payment begun before its configuration was disabled or deleted goes on through it.
  const configuration = await configurationForPayment(
    caller.projectId,
    fields.gateway_configuration_id,
    "native-apm",
    "gateway_configuration_id",
    payment.current?.record,
  );
  const values = fields.native_apm?.parameter_values ?? {};
  let known = payment.invoice;
  let current = payment.current;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    // The first attempt goes on from the request's first read; the next ones read again.
    if (attempt > 1) current = await transactionOf(caller, known);
    if (current) {
      const { record } = current;
      checkSamePayment(record, known, configuration);
      if (record.status !== "waiting") {
        throw conflict(
          "request.transaction.invalid-state",
          `The native payment of invoice ${known.id} is ${record.native_apm?.state ?? record.status}: it asks for nothing more.`,
        );
      }
      if (record.pending) {
        if (!leaseExpired(record.pending)) throw inProgress(record.id);
        const held = await takeOver(current);
        if (held) await resolveAbandoned({ request, invoice: known, answers: false }, held);
        continue;
      }
    }
    const step = stepOf(current?.record);
    checkValues(parametersOf(configuration, current?.record), values);
    const held = current
      ? await reserveStep(request, current)
      : await createNativeTransaction(request, known, configuration);
    if (held === undefined) continue;
    if ("takenBy" in held) {
      known = { ...known, transaction_id: held.takenBy };
      continue;
    }
    return runStep(request, known, held, step, stringValues(values));
  }
  throw concurrentChange(known.transaction_id ?? known.id);
}

function checkValues(parameters: Parameters<typeof parameterProblems>[0], values: Record<string, unknown>) {
  const problems = parameterProblems(parameters, values);
  const [first] = problems;
  if (!first) return;
  throw validationFailed(
    `${first.missing ? "missing" : "invalid"}-${first.name.replaceAll("_", "-")}`,
    problems.map(({ name, message }) => ({ name, message })),
  );
}

/** Checked values are strings (`parameterProblems` refuses any other). */
function stringValues(values: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

async function reserveStep(request: PaymentRequest, current: VersionedTransaction) {
  const next = reserved(current.record, "native-payment", current.record.amount, request.requestKey);
  const outcome = await commitTransition([
    transitionWrite(current, next, { status: "waiting", pending: null }),
  ]);
  return outcome === "committed" ? { record: next, version: current.version + 1 } : undefined;
}

async function createNativeTransaction(
  request: PaymentRequest,
  invoice: Invoice,
  configuration: GatewayConfiguration,
): Promise<VersionedTransaction | { takenBy: string }> {
  const { caller } = request;
  const customer = invoice.customer_id
    ? await findCustomer(caller.projectId, invoice.customer_id)
    : undefined;
  if (invoice.customer_id && !customer) throw notFound("customer", invoice.customer_id);
  if (customer?.currency && customer.currency !== invoice.currency)
    throw currencyMismatch(customer.id, customer.currency);
  const record = newTransaction(
    {
      projectId: caller.projectId,
      sandbox: caller.sandbox,
      invoice,
      source: { cardId: null, tokenId: null },
      paymentMethod: "native-apm",
      gateway: { configurationId: configuration.id, name: configuration.gateway_name },
      incremental: false,
      autoCaptureAt: null,
      autoCaptureAmount: null,
      metadata: {},
      requestKey: request.requestKey,
    },
    nowIn(caller.environment),
  );
  toMinorUnits(record.amount, record.currency);
  const checks = invoice.customer_id
    ? [customerCurrencyClaim(caller, invoice.customer_id, invoice.currency)]
    : [];
  const outcome = await insertTransaction(record, { incremental: false }, checks);
  if (outcome === "created") return { record, version: 1 };
  if (outcome === "invoice-not-found") throw notFound("invoice", invoice.id);
  if ("takenBy" in outcome) return outcome;
  throw currencyMismatch(invoice.customer_id ?? "", null);
}

async function runStep(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  step: "initial" | "customer-input",
  values: Record<string, string>,
): Promise<Reply> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const connector = await connectorFor(record);
  const native = connector.nativeApm;
  if (!native) throw new Error(`The gateway of transaction ${record.id} offers no native APM`);
  const result = await callConnector(connector, held, "native-payment", () =>
    native.pay({
      scope: record.project_id,
      reference: pending.id,
      amount: record.amount,
      currency: record.currency,
      step,
      values,
    }),
  );
  const settled = await settleOutcome({ request, invoice, answers: true }, held, result);
  if (settled.refusal) throw settled.refusal;
  return nativePaymentReply(settled.current.record);
}

/**
 * `GET /invoices/{id}/native-payment/{gateway_configuration_id}`: where the invoice's native payment
 * through this configuration stands, with what is still to collect (the configuration's first
 * parameters before any step).
 */
export async function nativePaymentDetails(
  caller: Caller,
  invoiceId: string,
  reference: string,
): Promise<Reply> {
  const { invoice, current } = await paymentOf(caller, invoiceId);
  const configuration = await configurationForPayment(
    caller.projectId,
    reference,
    "native-apm",
    "gateway_configuration_id",
    current?.record,
  );
  const record =
    current &&
    paymentMethodOf(current.record) === "native-apm" &&
    current.record.gateway_configuration_id === configuration.id
      ? current.record
      : undefined;
  const parameters = record?.native_apm
    ? record.native_apm.parameters
    : parametersOf(configuration, undefined);
  const definition = definitionOf(configuration);
  return ok({
    native_apm: {
      state: record?.native_apm?.state ?? null,
      gateway: {
        display_name: definition.methods[configuration.payment_method]?.display_name ?? definition.name,
        logo_url: definition.logo_url,
      },
      invoice: { amount: invoice.amount, currency_code: invoice.currency },
      parameters,
      parameterDefinitions: parameters,
      parameterValues: { message: record?.native_apm?.message ?? null },
    },
    transaction: record ? presentTransaction(record) : null,
  });
}
