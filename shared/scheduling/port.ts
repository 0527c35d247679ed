import { createHash } from "node:crypto";
import * as z from "zod";

/**
 * The scheduler port: jobs that run once at a given time. In AWS they are EventBridge Scheduler
 * one-time schedules (`eventbridge.ts`); the local stack keeps them in the table and fires them from
 * a poller (`table.ts`, `lib/local/scheduler.ts`). Either way the job's function receives the job
 * itself as its event, and must be idempotent: a schedule may fire more than once, late, or after
 * the state it was made for changed.
 */

/** Capture an authorized invoice at its `auto_capture_at` (`captureScheduled` in `shared/payments`). */
export interface CaptureInvoiceJob {
  kind: "capture-invoice";
  /** The environment project id the invoice belongs to. */
  scope: string;
  invoiceId: string;
}

export type ScheduledJob = CaptureInvoiceJob;
export type ScheduledJobKind = ScheduledJob["kind"];

export interface ScheduleRequest {
  /** Unique per job (see `captureScheduleName`); scheduling the same name again changes nothing. */
  name: string;
  at: Date;
  job: ScheduledJob;
}

export interface Scheduler {
  /** Idempotent: a job already scheduled under `name` stays as it is. */
  schedule(request: ScheduleRequest): Promise<void>;
  /** Idempotent: cancelling a job that ran or never existed succeeds. */
  cancel(name: string): Promise<void>;
}

/**
 * How a failed run is retried before the job is given up (to the dead-letter queue in AWS, to the
 * dead partition locally): the capture job throws while another operation of the transaction is in
 * flight, so that it runs again once that is over.
 */
export const JOB_RETRY = { maximumAttempts: 20, maximumEventAgeSeconds: 24 * 3600 } as const;

const jobSchema = z.object({
  kind: z.literal("capture-invoice"),
  scope: z.string().min(1),
  invoiceId: z.string().min(1),
});

/** The job a schedule carries, checked: a malformed event is a fault, not a job. */
export function parseJob(event: unknown): ScheduledJob {
  const parsed = jobSchema.safeParse(event);
  if (!parsed.success) throw new Error(`Not a scheduled job: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Schedule names: at most 64 characters of `[0-9a-zA-Z-_.]` (EventBridge Scheduler's rule). */
const NAME_PATTERN = /^[0-9a-zA-Z_.-]{1,64}$/;

/** The one schedule of an invoice's automatic capture: derived from the invoice, never random. */
export function captureScheduleName(invoiceId: string): string {
  const readable = `capture-${invoiceId}`;
  if (NAME_PATTERN.test(readable)) return readable;
  return `capture-${createHash("sha256").update(invoiceId).digest("hex").slice(0, 56)}`;
}
