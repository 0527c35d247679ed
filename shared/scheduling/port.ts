import { createHash } from "node:crypto";
import * as z from "../validation/zod.ts";

/**
 * The scheduler port: jobs that run once at a given time. In AWS they are EventBridge Scheduler
 * one-time schedules (`eventbridge.ts`); the local stack fires them from a poller (`table.ts`,
 * `lib/local/scheduler.ts`). Either way every job is also recorded in the table under its
 * environment and due time (`records.ts`), so a sandbox environment's clock can be moved forward and
 * its due jobs run at once, on a deployed stage too (`shared/sandbox/clock.ts`).
 *
 * A job's function receives the job itself as its event, and must be idempotent: a schedule may fire
 * more than once, late, or after the state it was made for changed. It decides from current state.
 */

/** Capture an authorized invoice at its `auto_capture_at` (`shared/payments/auto-capture.ts`). */
export interface CaptureInvoiceJob {
  kind: "capture-invoice";
  /** The environment project id the invoice belongs to. */
  scope: string;
  invoiceId: string;
}

/**
 * A subscription's scheduled work (`shared/subscriptions/billing.ts`): charge an iteration (attempt
 * 0 when due, then each dunning retry), tell that a trial ends soon, or cancel at a chosen date.
 * `due` (a charge) and `at` (a notice): the date the job was made for, carried once the trial was
 * moved (`PUT trial_end_at`), so that a schedule made for another date finds nothing to do.
 */
export type SubscriptionJob = {
  kind: "subscription";
  scope: string;
  subscriptionId: string;
} & (
  | { action: "charge"; iteration: number; attempt: number; due?: string }
  | { action: "trial-notice"; at?: string }
  | { action: "cancel"; at: string }
);

/**
 * The close of an environment's business day `day` (`YYYY-MM-DD` on its clock), due at 00:00 of the
 * next day: the sandbox gateway's payouts of what it settled that day, the providers' payouts, the
 * day's exports (`shared/payouts/close.ts`).
 */
export interface DailyCloseJob {
  kind: "daily-close";
  scope: string;
  day: string;
}

export type ScheduledJob = CaptureInvoiceJob | SubscriptionJob | DailyCloseJob;
export type ScheduledJobKind = ScheduledJob["kind"];

/**
 * The variable that tells a function allowed to schedule jobs the ARN of each kind's function (the
 * target of its schedules). `lib/topology.ts` declares the same names for the deployment.
 */
export const JOB_TARGET_VARIABLES: Record<ScheduledJobKind, string> = {
  "capture-invoice": "CAPTURE_JOB_FUNCTION_ARN",
  subscription: "SUBSCRIPTION_JOB_FUNCTION_ARN",
  "daily-close": "DAILY_CLOSE_JOB_FUNCTION_ARN",
};

export interface ScheduleRequest {
  /** Unique per job (derived from what it is for); scheduling the same name again changes nothing. */
  name: string;
  /** When the job is due, in its environment's business time (`nowIn`). */
  at: Date;
  job: ScheduledJob;
}

export interface Scheduler {
  /**
   * Idempotent: a job already scheduled under `name` stays as it is. `fireAt` is when, in real
   * time, the job must run (`at` less a sandbox clock's offset).
   */
  schedule(request: ScheduleRequest, fireAt: Date): Promise<void>;
  /** Idempotent: cancelling a job that ran or never existed succeeds. */
  cancel(name: string): Promise<void>;
}

/**
 * How a failed run is retried before the job is given up (to the dead-letter queue in AWS, to the
 * dead partition locally): a job throws while another operation of what it works on is in flight,
 * so that it runs again once that is over.
 */
export const JOB_RETRY = { maximumAttempts: 20, maximumEventAgeSeconds: 24 * 3600 } as const;

const scope = z.string().check(z.minLength(1));
const jobSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("capture-invoice"), scope, invoiceId: z.string().check(z.minLength(1)) }),
  z.object({
    kind: z.literal("daily-close"),
    scope,
    day: z.string().check(z.regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/)),
  }),
  z.discriminatedUnion("action", [
    z.object({
      kind: z.literal("subscription"),
      scope,
      subscriptionId: z.string().check(z.minLength(1)),
      action: z.literal("charge"),
      iteration: z.number().check(z.int(), z.gte(1)),
      attempt: z.number().check(z.int(), z.gte(0)),
      due: z.optional(z.string().check(z.minLength(1))),
    }),
    z.object({
      kind: z.literal("subscription"),
      scope,
      subscriptionId: z.string().check(z.minLength(1)),
      action: z.literal("trial-notice"),
      at: z.optional(z.string().check(z.minLength(1))),
    }),
    z.object({
      kind: z.literal("subscription"),
      scope,
      subscriptionId: z.string().check(z.minLength(1)),
      action: z.literal("cancel"),
      at: z.string().check(z.minLength(1)),
    }),
  ]),
]);

/** The job a schedule carries, checked: a malformed event is a fault, not a job. */
export function parseJob(event: unknown): ScheduledJob {
  const parsed = jobSchema.safeParse(event);
  if (!parsed.success) throw new Error(`Not a scheduled job: ${z.prettifyError(parsed.error)}`);
  return parsed.data as ScheduledJob;
}

/** Schedule names: at most 64 characters of `[0-9a-zA-Z-_.]` (EventBridge Scheduler's rule). */
const NAME_PATTERN = /^[0-9a-zA-Z_.-]{1,64}$/;

function scheduleName(readable: string): string {
  if (NAME_PATTERN.test(readable)) return readable;
  const [prefix] = readable.split("-");
  return `${prefix}-${createHash("sha256").update(readable).digest("hex").slice(0, 56)}`;
}

/** The one schedule of an invoice's automatic capture: derived from the invoice, never random. */
export function captureScheduleName(invoiceId: string): string {
  return scheduleName(`capture-${invoiceId}`);
}

/** The one schedule of each piece of a subscription's work: derived from what it is for. */
export function subscriptionScheduleName(job: SubscriptionJob): string {
  const what =
    job.action === "charge"
      ? `${job.iteration}-${job.attempt}${job.due ? `-${Date.parse(job.due)}` : ""}`
      : job.action === "trial-notice"
        ? `trial${job.at ? `-${Date.parse(job.at)}` : ""}`
        : `cancel-${Date.parse(job.at)}`;
  return scheduleName(`sub-${job.subscriptionId}-${what}`);
}

/** The one close of an environment's business day: derived from both, never random. */
export function dailyCloseScheduleName(scope: string, day: string): string {
  return scheduleName(`close-${scope}-${day}`);
}
