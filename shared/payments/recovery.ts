import { clock } from "../clock.ts";
import { RESERVATION_SHARDS } from "../db/keys.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError } from "../http/errors.ts";
import { findInvoice } from "../invoices/store.ts";
import { logger } from "../observability/logger.ts";
import { recordRecoverySettlement } from "../observability/metrics.ts";
import { findEnvironment } from "../projects/environment.ts";
import { type Resolution, resolveAbandoned, serviceRequest, takeOver } from "./core.ts";
import { expiredReservations, findTransactionRecord } from "./store.ts";
import { leaseExpired, type PendingOperation } from "./transaction.ts";

/**
 * The recovery job: every minute it finds the reserved payment operations whose lease is over (the
 * request that reserved them crashed or timed out between the provider call and its settlement) and
 * settles each from what the gateway recorded under the operation's reference: approved, declined,
 * or never received (a failed attempt; the transaction keeps its state). Each settlement records
 * the events of what it decided, as the request would have. Nothing waits for a merchant's retry.
 *
 * Safe to run twice at once: each reservation is taken over by a conditional write first, so only
 * one run settles it. An operation whose outcome the gateway cannot tell yet stays reserved and is
 * tried again at a later run.
 */
export interface RecoveryReport {
  /** Expired reservations found. */
  found: number;
  settled: number;
  notDone: number;
  /** The gateway could not tell yet: tried again at the next run. */
  unknown: number;
  /** Settled meanwhile by a request or another run. */
  skipped: number;
}

/** Reservations settled per shard and run: a run stays well within its function's time. */
const PER_SHARD = 25;

/**
 * `onlyScope`: the reservations of one environment only (tests share one table across processes,
 * each with its own clock, and must never settle another test's operations).
 */
export async function recoverReservations(options: { onlyScope?: string } = {}): Promise<RecoveryReport> {
  const report: RecoveryReport = { found: 0, settled: 0, notDone: 0, unknown: 0, skipped: 0 };
  const now = clock.now();
  const faults: unknown[] = [];
  for (let shard = 0; shard < RESERVATION_SHARDS; shard++) {
    for (const candidate of await expiredReservations(shard, now, PER_SHARD, options.onlyScope)) {
      report.found += 1;
      try {
        const outcome = await recoverOne(candidate.scope, candidate.id);
        if (outcome === "settled") report.settled += 1;
        else if (outcome === "not-done") report.notDone += 1;
        else report[outcome] += 1;
      } catch (error) {
        // One faulty reservation must not keep the others waiting: it is tried again next run.
        logger.error("Recovery of a payment operation failed", { ...candidate, error });
        report.unknown += 1;
        faults.push(error);
      }
    }
  }
  if (report.found > 0) logger.info("Recovery of abandoned payment operations", { ...report });
  // The run fails as a whole (retried, then alarmed on) when one of them failed.
  if (faults.length > 0)
    throw new AggregateError(faults, `${faults.length} reservations could not be recovered`);
  return report;
}

function recoverOne(scope: string, transactionId: string): Promise<Resolution | "unknown" | "skipped"> {
  return resolveReservation(
    scope,
    transactionId,
    (pending) => leaseExpired(pending),
    recordRecoverySettlement,
  );
}

/**
 * A provider's webhook told how an operation of the transaction ended (or may have): its reservation
 * is settled from the provider's record now, whether the provider held it (`awaiting_provider_since`)
 * or its lease is over. `busy`: a request holds the reservation and is settling it now (the webhook
 * is answered so that the provider sends it again later); `skipped`: nothing is reserved any more.
 */
export async function settleGatewayDecision(
  scope: string,
  transactionId: string,
  operation?: { type: string; reference: string },
): Promise<Resolution | "unknown" | "skipped" | "busy"> {
  let busy = false;
  const outcome = await resolveReservation(scope, transactionId, (pending) => {
    // A decision about another operation than the one reserved leaves it alone. An authorization
    // may be a later attempt (after a 3DS round) of the payment the provider names by its first one.
    if (operation && !concerns(pending, operation)) return false;
    const ready = leaseExpired(pending) || Boolean(pending.awaiting_provider_since);
    busy = !ready;
    return ready;
  });
  return busy ? "busy" : outcome;
}

function concerns(pending: PendingOperation, operation: { type: string; reference: string }): boolean {
  if (operation.type === "authorization") return pending.type === "authorization";
  if (operation.type === "capture" && pending.chained_capture?.id === operation.reference) return true;
  return pending.type === operation.type && pending.id === operation.reference;
}

async function resolveReservation(
  scope: string,
  transactionId: string,
  ready: (pending: PendingOperation) => boolean,
  settledAs?: (outcome: string) => void,
): Promise<Resolution | "unknown" | "skipped"> {
  const context = { project_id: scope, transaction_id: transactionId };
  const [environment, current] = await Promise.all([
    findEnvironment(scope),
    findTransactionRecord(scope, transactionId),
  ]);
  const pending = current?.record.pending;
  // The index is eventually consistent: the transaction itself decides.
  if (!environment || !current || !pending || !ready(pending)) return "skipped";
  const invoice = await findInvoice(scope, current.record.invoice_id);
  if (!invoice) {
    logger.error("Recovery: a transaction's invoice is missing", context);
    return "skipped";
  }
  const held = await takeOver(current);
  if (!held) return "skipped";
  const caller: Caller = { projectId: scope, sandbox: environment.sandbox, environment };
  try {
    const resolved = await resolveAbandoned(
      { request: serviceRequest(caller), invoice: invoice.invoice, answers: false },
      held,
    );
    settledAs?.(resolved.settledAs);
    return resolved.resolution;
  } catch (error) {
    if (error instanceof ApiError && error.errorType === "gateway.timeout") return "unknown";
    // Another request settled it between our takeover's lapse and now.
    if (error instanceof ApiError && error.status === 409) return "skipped";
    throw error;
  }
}
