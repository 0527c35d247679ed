import { type ClockedEnvironment, nowIn } from "../clock.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { findInvoice } from "../invoices/store.ts";
import { logger } from "../observability/logger.ts";
import { findEnvironment } from "../projects/environment.ts";
import { cancelJob, scheduleJob } from "../scheduling/index.ts";
import { type CaptureInvoiceJob, captureScheduleName } from "../scheduling/port.ts";
import { capturePlan } from "./capture.ts";
import { inProgress, reread, serviceRequest, transactionOf } from "./core.ts";
import { followUp } from "./follow-up.ts";
import { autoCaptureDue, CAPTURE_WINDOW_MS, type TransactionRecord } from "./transaction.ts";

/**
 * `auto_capture_at`: the authorization schedules its capture (one job per invoice, through the
 * scheduler port), and the job captures through the same follow-up path as `POST …/capture`.
 */
function autoCaptureJob(record: TransactionRecord): CaptureInvoiceJob {
  return { kind: "capture-invoice", scope: record.project_id, invoiceId: record.invoice_id };
}

/** Schedules the capture of the transaction at its `auto_capture_at` (idempotent; none without). */
export async function scheduleAutoCapture(
  record: TransactionRecord,
  environment: ClockedEnvironment,
): Promise<void> {
  if (record.auto_capture_at === null) return;
  await scheduleJob(
    {
      name: captureScheduleName(record.invoice_id),
      at: new Date(record.auto_capture_at),
      job: autoCaptureJob(record),
    },
    environment,
  );
}

/**
 * Drops the automatic capture of a transaction that was captured, voided or declined. Best effort:
 * the state change is done and answered whatever happens here, and a schedule left behind fires a
 * job that finds nothing to capture.
 */
export async function cancelAutoCapture(record: TransactionRecord): Promise<void> {
  if (record.auto_capture_at === null) return;
  try {
    await cancelJob(captureScheduleName(record.invoice_id));
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
  const request = serviceRequest(caller);
  const invoice = found.invoice;
  const current = await transactionOf(caller, invoice);
  if (!current) {
    logger.warn("Automatic capture: the invoice has no transaction", context);
    return "nothing-to-capture";
  }
  const now = nowIn(environment);
  const outcome = classifyForAutoCapture(current.record, now);
  if (outcome !== "capture") return outcome;
  try {
    await followUp(request, invoice, current, capturePlan(current.record.auto_capture_amount ?? undefined));
    return "captured";
  } catch (error) {
    // A fault, an operation in flight, or a gateway that failed or could not answer: run again later.
    if (
      !(error instanceof ApiError) ||
      error.status >= 500 ||
      error.errorType === "request.transaction.operation-in-progress"
    )
      throw error;
    if (error.status === 409) {
      // Another request moved the transaction first (a capture or void): classify it as it is now.
      const moved = await reread(caller, current.record.id);
      const settled = classifyForAutoCapture(moved.record, now);
      if (settled === "capture") throw error;
      return settled;
    }
    // A decline, recorded on the transaction (failed) with its event: not retried.
    logger.warn("Automatic capture declined", { ...context, error_type: error.errorType });
    return "declined";
  }
}

/** What the job does with the transaction at `now`, the environment's business time. */
function classifyForAutoCapture(record: TransactionRecord, now: Date): AutoCaptureOutcome | "capture" {
  const context = { invoice_id: record.invoice_id, transaction_id: record.id, status: record.status };
  const due = autoCaptureDue(record, now);
  if (due === "not-requested") {
    logger.warn("Automatic capture: the transaction did not ask for one", context);
    return "nothing-to-capture";
  }
  if (record.status === "completed" || record.status === "refunded") return "already-captured";
  // An operation in flight finishes first, and an abandoned one is settled by the recovery job
  // within minutes: the job runs again later and decides then.
  if (record.pending) throw inProgress(record.id);
  if (!due) throw new Error(`Automatic capture of ${record.id} ran before ${record.auto_capture_at}`);
  if (record.status !== "authorized") {
    logger.info("Automatic capture: nothing to capture", context);
    return "nothing-to-capture";
  }
  const deadline = Date.parse(record.authorized_at ?? "") + CAPTURE_WINDOW_MS;
  if (now.getTime() >= deadline) {
    logger.warn("Automatic capture: the capture window is over", context);
    return "nothing-to-capture";
  }
  return "capture";
}
