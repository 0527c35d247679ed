import { nowIn } from "../clock.ts";
import type { TransactItem } from "../db/transactions.ts";
import { type EventName, eventWrites } from "../events/event.ts";
import type { AuthenticateOutcome, PayoutOutcome } from "../gateways/connector.ts";
import { declineError } from "../gateways/errors.ts";
import { ApiError } from "../http/errors.ts";
import { ok, type Reply } from "../http/reply.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { logger } from "../observability/logger.ts";
import { exchangePut } from "../three-d-s/store.ts";
import {
  type CallResult,
  commitSettlement,
  connectorFor,
  events,
  lookupOrUnknown,
  type PaymentRequest,
  paymentReply,
  type Resolved,
  type Settlement,
} from "./core.ts";
import { transitionWrite, type VersionedTransaction } from "./store.ts";
import {
  awaitingCustomer,
  failedAttempt,
  operation,
  type PendingOperation,
  presentTransaction,
  type TransactionRecord,
} from "./transaction.ts";

/**
 * How the two provider operations that are no payment step settle: an authentication without
 * payment (`authenticate.ts`) and a payout to a card (`payout.ts`). Kept apart from those modules,
 * with what settling needs only, because the payments core settles their abandoned reservations too
 * (`resolveAbandoned`: the recovery job, a webhook, a request that meets one), and every payment
 * function bundles the core: routing and the authorization stay out of the functions that only
 * capture, void or refund.
 */

/**
 * Settles a held authentication with the provider's answer, in one write with its events and, when
 * it answers the request, the request's stored answer: the next round (the exchange opens with the
 * first, and the invoice is pending the customer), authenticated (the result kept for the
 * authorization), failed (`card.failed-three-d-s`; nothing else changes), or not done.
 */
export async function settleAuthentication(
  request: PaymentRequest,
  invoice: Invoice,
  held: VersionedTransaction,
  result: CallResult<AuthenticateOutcome>,
  answers: boolean,
): Promise<{ record: TransactionRecord; refusal?: ApiError }> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const now = nowIn(request.caller.environment);
  let next: TransactionRecord;
  let refusal: ApiError | undefined;
  const extra: TransactItem[] = [];
  let names: Array<"invoice.pending"> = [];
  if ("notDone" in result) {
    next = failedAttempt(record, result.notDone, now);
    refusal = new ApiError(502, result.notDone.errorType, result.notDone.message);
  } else {
    const outcome = result.outcome;
    if (outcome.status === "customer-action") {
      next = awaitingCustomer(record, outcome.round, outcome.customerAction, now, outcome.providerState);
      if (record.authentication === null) {
        const token = next.authentication?.token as string;
        extra.push(
          exchangePut(token, { kind: "transaction", scope: record.project_id, transactionId: record.id }),
        );
        names = ["invoice.pending"];
      }
    } else if (outcome.status === "declined") {
      next = {
        ...record,
        pending: null,
        three_d_s_status: "failed",
        error_code: outcome.errorType,
        error_message: outcome.message,
        operations: [
          ...record.operations,
          operation("three_d_s_check", pending.amount, false, outcome.errorType, now),
        ],
      };
      refusal = declineError(outcome);
    } else {
      next = {
        ...record,
        pending: null,
        three_d_s_status: outcome.threeDS,
        error_code: null,
        error_message: null,
        authenticated: {
          status: outcome.threeDS,
          reference: outcome.authenticationReference,
          gateway_configuration_id: record.gateway_configuration_id,
          card_id: record.card_id,
          token_id: record.token_id,
          at: now.toISOString(),
        },
        operations: [...record.operations, operation("three_d_s_check", pending.amount, true, null, now)],
      };
    }
  }
  await commitSettlement(
    held,
    [
      transitionWrite(held, next, { status: "waiting", pending: pending.id }),
      ...extra,
      ...eventWrites(record.project_id, events(invoice, next, names), now),
      ...(answers && !refusal ? request.commit(paymentReply(next)) : []),
    ],
    [],
  );
  return refusal ? { record: next, refusal } : { record: next };
}

/**
 * Settles a taken-over authentication from what the provider recorded under its reference (the
 * recovery job, or a request that meets it): an authentication it never received is a failed
 * attempt that changes nothing. Throws the 504 when the provider cannot tell yet.
 */
export async function resolveAbandonedAuthentication(
  settlement: Settlement,
  held: VersionedTransaction,
): Promise<Resolved> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const found = (await lookupOrUnknown(await connectorFor(record), record, "authentication", pending.id)) as
    | AuthenticateOutcome
    | undefined;
  const settled = await settleAuthentication(
    settlement.request,
    settlement.invoice,
    held,
    found
      ? { outcome: found }
      : {
          notDone: {
            status: "declined",
            errorType: "gateway.error",
            message:
              "The authentication was interrupted before the gateway received it; nothing was done. It can be tried again.",
          },
        },
    settlement.answers,
  );
  logger.info("Abandoned authentication settled from what the gateway recorded", {
    transaction_id: record.id,
    reference: pending.id,
    recorded: found !== undefined,
  });
  const current = { record: settled.record, version: held.version + 1 };
  return {
    current,
    resolution: found ? "settled" : "not-done",
    settledAs: found?.status ?? "not-done",
    ...(settled.refusal ? { refusal: settled.refusal } : {}),
  };
}

/** A payout's answer: its transaction. */
export function payoutReply(record: TransactionRecord): Reply {
  return ok({ transaction: presentTransaction(record) });
}

/**
 * Settles a held payout with the provider's answer, in one write with its event and, when it
 * answers the request, the request's stored answer: paid out (`completed`), declined (`failed`), or
 * not done (a failed attempt; the transaction stays `waiting` and the payout may be asked again).
 */
export async function settlePayout(
  settlement: Settlement,
  held: VersionedTransaction,
  result: CallResult<PayoutOutcome>,
): Promise<{ record: TransactionRecord; refusal?: ApiError }> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const now = nowIn(settlement.request.caller.environment);
  let next: TransactionRecord;
  let names: EventName[] = [];
  let refusal: ApiError | undefined;
  if ("notDone" in result) {
    next = failedAttempt(record, result.notDone, now);
    refusal = new ApiError(502, result.notDone.errorType, result.notDone.message);
  } else if (result.outcome.status === "declined") {
    const decline = result.outcome;
    next = {
      ...record,
      pending: null,
      status: "failed",
      error_code: decline.errorType,
      error_message: decline.message,
      operations: [...record.operations, operation("payout", pending.amount, false, decline.errorType, now)],
    };
    names = ["transaction.failed"];
    refusal = declineError(decline);
  } else {
    next = {
      ...record,
      pending: null,
      status: "completed",
      gateway_reference: result.outcome.gatewayReference,
      error_code: null,
      error_message: null,
      operations: [
        ...record.operations,
        { ...operation("payout", pending.amount, true, null, now), request_key: pending.request_key },
      ],
    };
    names = ["transaction.paid_out"];
  }
  await commitSettlement(
    held,
    [
      transitionWrite(held, next, { status: "waiting", pending: pending.id }),
      ...eventWrites(record.project_id, events(settlement.invoice, next, names), now),
      ...(settlement.answers && !refusal ? settlement.request.commit(payoutReply(next)) : []),
    ],
    [],
  );
  return refusal ? { record: next, refusal } : { record: next };
}

/**
 * Settles a taken-over payout from what the provider recorded under its reference (the recovery
 * job, or a request that meets it): paid out, declined, or never received (a failed attempt: nothing
 * moved). Throws the 504 when the provider cannot tell yet: the reservation lapses again for later.
 */
export async function resolveAbandonedPayout(
  settlement: Settlement,
  held: VersionedTransaction,
): Promise<Resolved> {
  const { record } = held;
  const pending = record.pending as PendingOperation;
  const found = (await lookupOrUnknown(await connectorFor(record), record, "payout", pending.id)) as
    | PayoutOutcome
    | undefined;
  const settled = await settlePayout(
    settlement,
    held,
    found
      ? { outcome: found }
      : {
          notDone: {
            status: "declined",
            errorType: "gateway.error",
            message:
              "The payout was interrupted before the gateway received it; nothing was paid out. It can be asked again.",
          },
        },
  );
  logger.info("Abandoned payout settled from what the gateway recorded", {
    transaction_id: record.id,
    reference: pending.id,
    recorded: found !== undefined,
    status: settled.record.status,
  });
  return {
    current: { record: settled.record, version: held.version + 1 },
    resolution: found ? "settled" : "not-done",
    settledAs: found?.status ?? "not-done",
    ...(settled.refusal ? { refusal: settled.refusal } : {}),
  };
}
