import { nowIn } from "../clock.ts";
import type { TransactItem } from "../db/transactions.ts";
import { failedConditions } from "../db/transactions.ts";
import { type EventName, eventWrites, type PendingEvent } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError } from "../http/errors.ts";
import { type Invoice, newInvoice, presentInvoice } from "../invoices/invoice.ts";
import type { InvoiceInput } from "../invoices/schema.ts";
import { insertInvoice } from "../invoices/store.ts";
import { isZeroAmount } from "../money.ts";
import { logger } from "../observability/logger.ts";
import { captureInvoice } from "../payments/capture.ts";
import { paymentOf, serviceRequest } from "../payments/core.ts";
import { presentTransaction, type TransactionRecord } from "../payments/transaction.ts";
import { daysBefore } from "../plans/interval.ts";
import { findEnvironment } from "../projects/environment.ts";
import { cancelJob, scheduleJob } from "../scheduling/index.ts";
import { type SubscriptionJob, subscriptionScheduleName } from "../scheduling/port.ts";
import { invoiceDetails, lastCharge } from "./lines.ts";
import {
  commitSubscriptionChange,
  findSubscription,
  subscriptionReplace,
  subscriptionTransactionWrite,
  type VersionedSubscription,
} from "./store.ts";
import {
  attemptDueAt,
  CANCELED_FOR_NON_PAYMENT,
  canceled,
  currentAttemptNumber,
  declined,
  iterated,
  outOfRetries,
  presentSubscription,
  type Subscription,
  TRIAL_NOTICE_DAYS,
  withAttempt,
  withDueCharge,
} from "./subscription.ts";

/**
 * Subscriptions bill themselves: each piece of their work is a scheduled job (`kind: subscription`,
 * one schedule per iteration attempt, named after it), run by EventBridge Scheduler in AWS, the
 * local scheduler on this machine, or a sandbox clock's advance, and by `POST`/`PUT
 * /subscriptions` when a charge is due at once.
 *
 * An iteration is charged exactly once, whatever happens: every step is conditional on the
 * subscription still being at the version read, at that iteration and attempt. An attempt has one
 * invoice (created with the attempt's record in one transaction); its payment goes through the
 * payment path, which makes one transaction per invoice and never moves money twice; the iteration
 * is recorded paid (with its events and the next iteration's schedule) on the subscription's
 * version. A job fired twice, two at once, or a run that crashed anywhere in between all find the
 * same attempt and its invoice, and at most one of them records it.
 */
const ATTEMPTS = 4;

export type SubscriptionJobOutcome = "charged" | "declined" | "canceled" | "notice-sent" | "nothing-to-do";

export interface Context {
  caller: Caller;
  now: Date;
}

export async function subscriptionContext(scope: string): Promise<Context | undefined> {
  const environment = await findEnvironment(scope);
  if (!environment) return undefined;
  const caller: Caller = { projectId: scope, sandbox: environment.sandbox, environment };
  return { caller, now: nowIn(environment) };
}

/**
 * Runs one job of a subscription. `immediate`: a charge runs now even before its time (a new
 * source given during dunning retries at once).
 */
export async function runSubscriptionJob(
  job: SubscriptionJob,
  options: { immediate?: boolean } = {},
): Promise<SubscriptionJobOutcome> {
  const context = await subscriptionContext(job.scope);
  if (!context) return "nothing-to-do";
  if (job.action === "charge") return charge(context, job, options.immediate === true);
  if (job.action === "trial-notice") return trialNotice(context, job);
  return cancelAsScheduled(context, job.subscriptionId, job.at);
}

function subscriptionEvents(
  subscription: Subscription,
  now: Date,
  names: EventName[],
  payment?: {
    invoice: ReturnType<typeof presentInvoice> | null;
    transaction: ReturnType<typeof presentTransaction> | null;
  },
): PendingEvent[] {
  const data = {
    subscription: presentSubscription(subscription, now),
    ...(payment ? { ...payment, charge: lastCharge(subscription) } : {}),
  };
  return names.map((name) => ({ name, data }));
}

/** The write of a change of the subscription with its events, for one DynamoDB transaction. */
function changeWrites(
  current: VersionedSubscription,
  next: Subscription,
  events: PendingEvent[],
  now: Date,
  transaction?: TransactionRecord | null,
): TransactItem[] {
  return [
    subscriptionReplace(current, next),
    ...eventWrites(next.project_id, events, now),
    ...(transaction ? [subscriptionTransactionWrite(next, transaction.id)] : []),
  ];
}

// ─── Charging an iteration ──────────────────────────────────────────────────────────────────────

async function charge(
  context: Context,
  job: Extract<SubscriptionJob, { action: "charge" }>,
  immediate: boolean,
): Promise<SubscriptionJobOutcome> {
  const { caller, now } = context;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await findSubscription(caller.projectId, job.subscriptionId);
    if (!current) return "nothing-to-do";
    const subscription = current.subscription;
    // Done already (paid, retried, canceled): a job fired again, or a schedule left behind.
    if (
      subscription.canceled ||
      subscription.iteration !== job.iteration ||
      currentAttemptNumber(subscription) !== job.attempt
    ) {
      return "nothing-to-do";
    }
    const due = attemptDueAt(subscription, job.attempt);
    if (due === null) return "nothing-to-do";
    // The trial was moved since this schedule was made (`PUT trial_end_at`): the schedule of the
    // new date charges it, this one ends here (a moved-later trial's old schedule is not early).
    if (movedAway(subscription, job, due)) return "nothing-to-do";
    // The cancellation asked for comes first: a subscription ending at this date is not charged.
    if (subscription.cancel_at !== null && Date.parse(subscription.cancel_at) <= due.getTime()) {
      if ((await cancel(context, current, subscription.cancellation_reason)) === "canceled")
        return "canceled";
      continue;
    }
    if (!immediate && now.getTime() < due.getTime()) {
      // A schedule that fired early (another container's clock): the scheduler runs it again.
      throw new Error(
        `Subscription ${subscription.id} iteration ${job.iteration} is due at ${due.toISOString()}`,
      );
    }
    const attempt = await attemptInvoice(context, current, due);
    if (attempt === undefined) continue;
    if ("free" in attempt) {
      if ((await recordPaid(context, attempt.current, undefined)) === "committed") return "charged";
      continue;
    }
    const payment = await pay(caller, subscription, attempt);
    // The change is conditional on the subscription as the attempt's record left it.
    const committed =
      payment.status === "paid"
        ? await recordPaid(context, attempt.current, payment)
        : await recordDeclined(context, attempt.current, payment);
    if (committed === "committed") return payment.status === "paid" ? "charged" : "declined";
  }
  throw new Error(`Subscription ${job.subscriptionId} kept changing while charging it`);
}

/**
 * The invoice of the current attempt: made once, with the attempt's record and the iteration's
 * fixed charge (`withDueCharge`; the subscription as it then stands is returned with it); `free`
 * when the charge is nothing (discounts and credit cover it), which needs no payment; undefined:
 * re-read.
 */
async function attemptInvoice(
  context: Context,
  current: VersionedSubscription,
  dueAt: Date,
): Promise<
  | { invoiceId: string; fresh: boolean; current: VersionedSubscription }
  | { free: true; current: VersionedSubscription }
  | undefined
> {
  const subscription = current.subscription;
  const made = subscription.attempt;
  if (made?.iteration === subscription.iteration && made.number === currentAttemptNumber(subscription)) {
    return { invoiceId: made.invoice_id, fresh: false, current };
  }
  // Fixed at its due time: a charge run early (`immediate`) fixes it as if it were due.
  const charged = withDueCharge(subscription, new Date(Math.max(context.now.getTime(), dueAt.getTime())));
  const charge = charged.due_charge;
  if (!charge || charge.iteration !== subscription.iteration)
    throw new Error(`Subscription ${subscription.id} has no charge for iteration ${subscription.iteration}`);
  if (isZeroAmount(charge.amount)) return { free: true, current };
  const input = {
    name: charged.name,
    amount: charge.amount,
    currency: charged.currency,
    customer_id: subscription.customer_id,
    merchant_initiator_type: "recurring",
    metadata: {
      subscription_iteration: String(subscription.iteration),
      subscription_attempt: String(currentAttemptNumber(subscription)),
    },
    details: invoiceDetails(charge),
  } satisfies Partial<InvoiceInput>;
  const invoice: Invoice = {
    ...newInvoice(context.caller, input as InvoiceInput, context.now),
    subscription_id: subscription.id,
  };
  const attempted = withAttempt(charged, invoice.id, context.now);
  try {
    const outcome = await insertInvoice(invoice, { customerId: subscription.customer_id }, [
      subscriptionReplace(current, attempted),
    ]);
    if (outcome === "created") {
      const after = { ...current, subscription: attempted, version: current.version + 1 };
      return { invoiceId: invoice.id, fresh: true, current: after };
    }
  } catch (error) {
    // Another run made this attempt's invoice (or changed the subscription) first: read again.
    if (failedConditions(error)?.length) return undefined;
    throw error;
  }
  // The customer is gone: nothing can be charged any more.
  await cancel(context, current, "customer-deleted");
  return undefined;
}

/** How an attempt's payment ended, with its invoice as it then stood (for the events). */
type Payment =
  | { status: "paid"; invoice: Invoice; transaction: TransactionRecord }
  | {
      status: "declined";
      invoice: Invoice;
      transaction: TransactionRecord | null;
      code: string;
      message: string;
      doNotRetry: boolean;
    };

/**
 * Pays the attempt's invoice with the subscription's token, as a merchant-initiated payment through
 * the payment path (one transaction per invoice: a repeat finds the payment as it stands). A
 * payment in flight or a gateway that could not answer throws: the job runs again later.
 */
async function pay(
  caller: Caller,
  subscription: Subscription,
  { invoiceId, fresh }: { invoiceId: string; fresh: boolean },
): Promise<Payment> {
  // Invoice and transaction in one round trip (`paymentOf`); an invoice this run just made has none.
  const paymentNow = async () => {
    const { invoice, current } = await paymentOf(caller, invoiceId);
    return { invoice, transaction: current?.record };
  };
  const before = fresh ? undefined : await paymentNow();
  const earlier = before?.transaction;
  if (before && earlier && (earlier.status === "completed" || earlier.status === "refunded")) {
    return { status: "paid", invoice: before.invoice, transaction: earlier };
  }
  if (earlier?.status !== "failed") {
    try {
      await captureInvoice(serviceRequest(caller), invoiceId, { source: subscription.token_id });
    } catch (error) {
      // Another run of this job paid (or declined) the invoice first: its payment is read below.
      const movedByAnother =
        error instanceof ApiError && error.errorType === "request.transaction.invalid-state";
      if (!isRefusal(error) && !movedByAnother) throw error;
      if (movedByAnother) return settledPayment();
      const after = await paymentNow();
      if (after.transaction?.status === "failed") return declinedPayment(after.invoice, after.transaction);
      return {
        status: "declined",
        invoice: after.invoice,
        transaction: after.transaction ?? null,
        code: error.errorType,
        message: error.message,
        // The card scheme forbids another attempt on the card (a Mastercard merchant advice code).
        doNotRetry: error.errorType === "card.do-not-retry",
      };
    }
  }
  return settledPayment();

  async function settledPayment(): Promise<Payment> {
    const { invoice, transaction } = await paymentNow();
    if (!transaction)
      throw new Error(`Invoice ${invoiceId} of subscription ${subscription.id} has no transaction`);
    if (transaction.status === "failed") return declinedPayment(invoice, transaction);
    if (transaction.status !== "completed")
      throw new Error(`The payment of invoice ${invoiceId} is ${transaction.status}`);
    return { status: "paid", invoice, transaction };
  }
}

function declinedPayment(invoice: Invoice, transaction: TransactionRecord): Payment {
  return {
    status: "declined",
    invoice,
    transaction,
    code: transaction.error_code ?? "card.declined",
    message: transaction.error_message ?? "The payment was declined.",
    doNotRetry: transaction.retry_advice === "do-not-retry",
  };
}

/**
 * What the payment path answers for a payment that cannot succeed with this source: a decline, or
 * a token or card no longer usable. Not a refusal: a payment in flight, a gateway fault (5xx).
 */
function isRefusal(error: unknown): error is ApiError {
  if (!(error instanceof ApiError) || error.status >= 500) return false;
  if (error.status === 409) return false;
  return true;
}

/** The events of an iteration its discounts and credit paid for whole: no invoice was needed. */
const noPayment = { invoice: null, transaction: null };

function paymentData(payment: Payment) {
  return {
    invoice: presentInvoice(payment.invoice),
    transaction: payment.transaction ? presentTransaction(payment.transaction) : null,
  };
}

/** The iteration is paid: the next one is scheduled, then the subscription moves to it. */
async function recordPaid(
  context: Context,
  current: VersionedSubscription,
  payment: Extract<Payment, { status: "paid" }> | undefined,
): Promise<"committed" | "changed"> {
  const { caller, now } = context;
  const subscription = current.subscription;
  const next = iterated(subscription, now);
  const names: EventName[] = [];
  if (subscription.iteration === 1 && subscription.trial_end_at !== null)
    names.push("subscription.trial.ended");
  if (!subscription.activated) names.push("subscription.started");
  names.push("subscription.iterated");
  // Scheduled before the iteration is recorded (idempotent by its name), so that no crash can leave
  // a paid iteration without the next one; a schedule made by a run that then lost finds its
  // iteration not yet due, or done, and does nothing.
  await scheduleNextCharge(caller, next);
  return commitSubscriptionChange(
    changeWrites(
      current,
      next,
      subscriptionEvents(next, now, names, payment ? paymentData(payment) : noPayment),
      now,
      payment?.transaction,
    ),
  );
}

async function recordDeclined(
  context: Context,
  current: VersionedSubscription,
  payment: Extract<Payment, { status: "declined" }>,
): Promise<"committed" | "changed"> {
  const { caller, now } = context;
  const subscription = current.subscription;
  const failed = declined(subscription, { code: payment.code, message: payment.message }, now);
  const data = paymentData(payment);
  if (outOfRetries(subscription, payment.doNotRetry)) {
    const ended = canceled(failed, CANCELED_FOR_NON_PAYMENT, now);
    return commitSubscriptionChange(
      changeWrites(
        current,
        ended,
        subscriptionEvents(ended, now, ["subscription.payment_failed", "subscription.canceled"], data),
        now,
        payment.transaction,
      ),
    );
  }
  await scheduleNextCharge(caller, failed);
  return commitSubscriptionChange(
    changeWrites(
      current,
      failed,
      subscriptionEvents(failed, now, ["subscription.payment_failed"], data),
      now,
      payment.transaction,
    ),
  );
}

/** Whether the first charge's trial was moved (`PUT trial_end_at`) since `job` was scheduled. */
function movedAway(
  subscription: Subscription,
  job: Extract<SubscriptionJob, { action: "charge" }>,
  due: Date,
): boolean {
  if (subscription.trial_moved !== true || job.iteration !== 1 || job.attempt !== 0) return false;
  return job.due === undefined || Date.parse(job.due) !== due.getTime();
}

/** The job of the subscription's next charge (its next iteration, or the retry of this one). */
export function nextChargeJob(subscription: Subscription): Extract<SubscriptionJob, { action: "charge" }> {
  const attempt = currentAttemptNumber(subscription);
  const dated = subscription.trial_moved === true && subscription.iteration === 1 && attempt === 0;
  return {
    kind: "subscription",
    scope: subscription.project_id,
    subscriptionId: subscription.id,
    action: "charge",
    iteration: subscription.iteration,
    attempt,
    ...(dated && subscription.iterate_at ? { due: subscription.iterate_at } : {}),
  };
}

/** When the trial's notice is due (3 days before the trial ends); null without a trial. */
function trialNoticeAt(subscription: Subscription): Date | null {
  if (subscription.trial_end_at === null) return null;
  return daysBefore(new Date(subscription.trial_end_at), TRIAL_NOTICE_DAYS);
}

/** The job of the trial's notice: dated once the trial was moved. */
export function trialNoticeJob(
  subscription: Subscription,
): Extract<SubscriptionJob, { action: "trial-notice" }> {
  const at = trialNoticeAt(subscription);
  return {
    kind: "subscription",
    scope: subscription.project_id,
    subscriptionId: subscription.id,
    action: "trial-notice",
    ...(subscription.trial_moved === true && at ? { at: at.toISOString() } : {}),
  };
}

/** Schedules the subscription's next charge at its due time (none once it ends before it). */
export async function scheduleNextCharge(caller: Caller, subscription: Subscription): Promise<void> {
  const job = nextChargeJob(subscription);
  const due = attemptDueAt(subscription, job.attempt);
  if (due === null || subscription.canceled) return;
  if (subscription.cancel_at !== null && Date.parse(subscription.cancel_at) <= due.getTime()) return;
  await scheduleJob({ name: subscriptionScheduleName(job), at: due, job }, caller.environment);
}

/** Schedules the trial's notice (3 days before it ends), when there is time for one. */
export async function scheduleTrialNotice(caller: Caller, subscription: Subscription): Promise<void> {
  const at = trialNoticeAt(subscription);
  if (at === null || at.getTime() <= nowIn(caller.environment).getTime()) return;
  const job = trialNoticeJob(subscription);
  await scheduleJob({ name: subscriptionScheduleName(job), at, job }, caller.environment);
}

/** Schedules a cancellation asked for at a date. */
export async function scheduleCancellation(caller: Caller, subscription: Subscription): Promise<void> {
  if (subscription.cancel_at === null) return;
  const job: SubscriptionJob = {
    kind: "subscription",
    scope: subscription.project_id,
    subscriptionId: subscription.id,
    action: "cancel",
    at: subscription.cancel_at,
  };
  await scheduleJob(
    { name: subscriptionScheduleName(job), at: new Date(subscription.cancel_at), job },
    caller.environment,
  );
}

// ─── Trial notice and cancellation ──────────────────────────────────────────────────────────────

async function trialNotice(
  context: Context,
  job: Extract<SubscriptionJob, { action: "trial-notice" }>,
): Promise<SubscriptionJobOutcome> {
  const { caller, now } = context;
  const subscriptionId = job.subscriptionId;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await findSubscription(caller.projectId, subscriptionId);
    const subscription = current?.subscription;
    if (!current || !subscription || subscription.canceled || subscription.trial_notice_sent)
      return "nothing-to-do";
    // Once the trial's first charge ran, the notice has nothing left to announce.
    if (subscription.trial_end_at === null || subscription.iteration > 1 || subscription.dunning !== null) {
      return "nothing-to-do";
    }
    // A notice scheduled before the trial was moved: the new date's notice (if any) sends it.
    if (subscription.trial_moved === true && job.at !== trialNoticeJob(subscription).at)
      return "nothing-to-do";
    const next = { ...subscription, trial_notice_sent: true, updated_at: now.toISOString() };
    const outcome = await commitSubscriptionChange(
      changeWrites(current, next, subscriptionEvents(next, now, ["subscription.trial.ending_soon"]), now),
    );
    if (outcome === "committed") return "notice-sent";
  }
  throw new Error(`Subscription ${subscriptionId} kept changing while sending its trial notice`);
}

async function cancelAsScheduled(
  context: Context,
  subscriptionId: string,
  at: string,
): Promise<SubscriptionJobOutcome> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await findSubscription(context.caller.projectId, subscriptionId);
    const subscription = current?.subscription;
    // Canceled already, or the cancellation was moved or withdrawn since.
    if (!current || !subscription || subscription.canceled || subscription.cancel_at !== at)
      return "nothing-to-do";
    if (Date.parse(at) > context.now.getTime())
      throw new Error(`Subscription ${subscriptionId} ends at ${at}`);
    if ((await cancel(context, current, subscription.cancellation_reason)) === "canceled") return "canceled";
  }
  throw new Error(`Subscription ${subscriptionId} kept changing while canceling it`);
}

/**
 * Drops what a canceled subscription had scheduled. Best effort: a schedule left behind fires a job
 * that finds the subscription canceled and does nothing.
 */
export async function dropScheduledWork(subscription: Subscription): Promise<void> {
  const base = {
    kind: "subscription" as const,
    scope: subscription.project_id,
    subscriptionId: subscription.id,
  };
  const jobs: SubscriptionJob[] = [nextChargeJob(subscription), trialNoticeJob(subscription)];
  if (subscription.cancel_at) jobs.push({ ...base, action: "cancel", at: subscription.cancel_at });
  for (const job of jobs) {
    try {
      await cancelJob(subscriptionScheduleName(job));
    } catch (error) {
      logger.warn("Could not drop a canceled subscription's schedule; it will do nothing", {
        subscription_id: subscription.id,
        error,
      });
    }
  }
}

/**
 * Drops the first charge's and the notice's schedules of a trial as it stood before it was moved
 * (`before`), unless `after` keeps the same ones. Best effort: one left behind does nothing.
 */
export async function dropMovedTrialWork(before: Subscription, after: Subscription): Promise<void> {
  const kept = new Set([nextChargeJob(after), trialNoticeJob(after)].map(subscriptionScheduleName));
  for (const job of [nextChargeJob(before), trialNoticeJob(before)]) {
    const name = subscriptionScheduleName(job);
    if (kept.has(name)) continue;
    try {
      await cancelJob(name);
    } catch (error) {
      logger.warn("Could not drop a moved trial's schedule; it will do nothing", {
        subscription_id: before.id,
        error,
      });
    }
  }
}

/** Cancels now, with the event; "nothing-to-do" when another change came first (re-read). */
export async function cancel(
  context: Context,
  current: VersionedSubscription,
  reason: string | null,
): Promise<SubscriptionJobOutcome> {
  const next = canceled(current.subscription, reason, context.now);
  const outcome = await commitSubscriptionChange(
    changeWrites(
      current,
      next,
      subscriptionEvents(next, context.now, ["subscription.canceled"]),
      context.now,
    ),
  );
  if (outcome !== "committed") return "nothing-to-do";
  logger.info("Subscription canceled", { subscription_id: next.id, reason });
  await dropScheduledWork(current.subscription);
  return "canceled";
}
