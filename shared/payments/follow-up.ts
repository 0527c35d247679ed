import { nowIn } from "../clock.ts";
import type { AuthorizeOutcome, PaymentConnector, RecordedOutcome } from "../gateways/connector.ts";
import { type ApiError, busy } from "../http/errors.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { compareAmounts, toMinorUnits } from "../money.ts";
import {
  ATTEMPTS,
  type CallResult,
  callConnector,
  cardOperations,
  concurrentChange,
  connectorFor,
  inProgress,
  type PaymentRequest,
  reread,
  resolveAbandoned,
  type Settlement,
  settleOutcome,
  takeOver,
} from "./core.ts";
import { commitTransition, type Expected, transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  authorizedWith,
  chainedCaptureOf,
  leaseExpired,
  type newRefund,
  type PendingOperation,
  type PendingType,
  reserved,
  type TransactionRecord,
} from "./transaction.ts";

/**
 * Reserve → call → settle for the operations that follow an authorization: capture, void, increment
 * and refund (one module each, `capture.ts`, `void.ts`, …, describes what it allows).
 */
export interface FollowUpPlan {
  type: Exclude<PendingType, "authorization">;
  amount: (record: TransactionRecord) => string;
  /** Throws the refusal when the operation is not allowed on the transaction as it is (at `now`). */
  allowed: (record: TransactionRecord, amount: string, now: Date) => void;
  refund?: (record: TransactionRecord, amount: string, now: Date) => ReturnType<typeof newRefund>;
}

/** The gateway received an operation and has not decided it yet (its webhook will): try again then. */
const awaitingGateway = (id: string, type: string) =>
  busy(
    "request.transaction.awaiting-gateway",
    `The gateway has not yet decided the ${type} of transaction ${id}: its webhook settles it; try again then.`,
  );

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

/**
 * Performs `plan` on the transaction and returns it as settled. An abandoned reservation met on the
 * way (its holder crashed) is settled first from what the gateway recorded: when it is this very
 * request's own operation, that settlement is the answer.
 */
export async function followUp(
  request: PaymentRequest,
  invoice: Invoice,
  start: VersionedTransaction,
  plan: FollowUpPlan,
): Promise<TransactionRecord> {
  let current = start;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { record } = current;
    // Business time: the capture window is the environment's (a sandbox clock may be ahead).
    const now = nowIn(request.caller.environment);
    const pending = record.pending;
    if (pending) {
      if (pending.awaiting_provider_since) throw awaitingGateway(record.id, pending.type);
      if (!leaseExpired(pending)) throw inProgress(record.id);
      const held = await takeOver(current);
      if (held) {
        const own = isOwnOperation(pending, plan, plan.amount(record), request.requestKey);
        const resolved = await resolveAbandoned({ request, invoice, answers: own }, held);
        if (own && resolved.resolution === "settled") {
          if (resolved.refusal) throw resolved.refusal;
          return resolved.current.record;
        }
      }
      current = await reread(request.caller, record.id);
      continue;
    }
    const amount = plan.amount(record);
    plan.allowed(record, amount, now);
    const next = reserved(record, plan.type, amount, request.requestKey, {
      refund: plan.refund?.(record, amount, now),
    });
    const minor = Number(toMinorUnits(amount, record.currency));
    const expected: Expected = {
      status: record.status,
      pending: null,
      ...(plan.type === "capture" ? { capture: { now: now.getTime(), minor } } : {}),
      ...(plan.type === "refund" ? { refund: { minor } } : {}),
    };
    const outcome = await commitTransition([transitionWrite(current, next, expected)]);
    if (outcome === "committed") {
      return callAndSettle(request, invoice, { record: next, version: current.version + 1 });
    }
    current = await reread(request.caller, record.id);
  }
  throw concurrentChange(start.record.id);
}

/** Calls the connector for a held follow-up operation (its `pending`): what the provider answered. */
function followUpCall(
  connector: PaymentConnector,
  held: VersionedTransaction,
): Promise<CallResult<RecordedOutcome>> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const type = pending.type as FollowUpPlan["type"];
  const operation = {
    scope: record.project_id,
    gatewayReference: record.gateway_reference ?? "",
    reference: pending.id,
    amount: pending.amount,
    currency: record.currency,
    authorizedAmount: record.authorized_amount,
    ...(pending.refund ? { refundId: pending.refund.id } : {}),
  };
  return callConnector(connector, held, type, () =>
    type === "capture"
      ? connector.capture(operation)
      : type === "void"
        ? connector.void(operation)
        : type === "refund"
          ? connector.refund(operation)
          : cardOperations(connector, record).incrementAuthorization(operation),
  );
}

/** Calls the connector for a held follow-up operation and settles its outcome as the request's answer. */
async function callAndSettle(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
): Promise<TransactionRecord> {
  const result = await followUpCall(await connectorFor(held.record), held);
  const settled = await settleOutcome({ request, invoice, answers: true }, held, result);
  if (settled.refusal) throw settled.refusal;
  return settled.current.record;
}

/**
 * Settles an authorization's outcome. When its reservation chains a capture (a capture with a
 * source: `PendingOperation.chained_capture`), the authorization was approved and `plan` allows the capture on
 * it, the capture is made first, under the same reservation, and both settle in one write that
 * answers the request (`captured`). A capture whose outcome is unknown is written reserved, for the
 * recovery job, and its 504 thrown. Otherwise the authorization settles alone.
 */
export async function settleAuthorization(
  settlement: Settlement,
  held: VersionedTransaction,
  result: CallResult<RecordedOutcome>,
  connector: PaymentConnector,
  plan: FollowUpPlan | undefined,
): Promise<{ current: VersionedTransaction; refusal?: ApiError; captured: boolean }> {
  const pending = held.record.pending as PendingOperation;
  const approved = "outcome" in result && result.outcome.status === "approved";
  const capturing =
    approved && pending.chained_capture && plan
      ? chainedCapture(settlement, held, result.outcome, plan)
      : undefined;
  if (!capturing) return { ...(await settleOutcome(settlement, held, result)), captured: false };
  let captured: CallResult<RecordedOutcome>;
  try {
    captured = await followUpCall(connector, { record: capturing, version: held.version });
  } catch (error) {
    await settleOutcome(settlement, held, result, "reserved");
    throw error;
  }
  const settled = await settleOutcome({ ...settlement, answers: true }, held, result, captured);
  return { ...settled, captured: true };
}

/** The transaction held for its chained capture once authorized; undefined when `plan` refuses it now. */
function chainedCapture(
  settlement: Settlement,
  held: VersionedTransaction,
  outcome: RecordedOutcome,
  plan: FollowUpPlan,
): TransactionRecord | undefined {
  const pending = held.record.pending as PendingOperation;
  const now = nowIn(settlement.request.caller.environment);
  const { gatewayReference, threeDS } = outcome as Extract<AuthorizeOutcome, { status: "approved" }>;
  const capturing = chainedCaptureOf(authorizedWith(held.record, gatewayReference, threeDS, now), pending);
  try {
    plan.allowed(capturing, pending.chained_capture?.amount ?? "", now);
    return capturing;
  } catch {
    // Not now: the request's own capture (`followUp`) meets the same refusal and answers it.
    return undefined;
  }
}
