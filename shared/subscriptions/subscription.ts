import { newId } from "../ids.ts";
import { zeroIn } from "../money.ts";
import { type Interval, intervalsAfter, parseInterval } from "../plans/interval.ts";
import {
  type Addon,
  type Charge,
  type Discount,
  type Period,
  type Proration,
  type Residue,
  renewalCharge,
} from "./charges.ts";

/**
 * A subscription: a customer billed the same terms (name, amount, currency) at each interval,
 * through a customer token of theirs, as merchant-initiated payments. Pure: the store writes what
 * these functions return, each change on the condition that the subscription is still at the
 * version it was read at.
 *
 * Iterations are numbered from 1. `iteration` is the next one to charge and `iterate_at` when it is
 * due; each is charged by an invoice of its own (one per attempt), and once paid the subscription
 * moves to the next. Dates are computed from an anchor (the due date of iteration
 * `anchor_iteration`), so a calendar month keeps its day: Jan 31 → Feb 28 → Mar 31.
 *
 *   created ──trial──▶ trialing (iteration 1 due at the trial's end)
 *   iteration n due ──paid──▶ iteration n+1 (activated, subscription.iterated)
 *                   ──declined──▶ past due: retried after DUNNING_DELAYS_DAYS (payment_failed)
 *                                 ──last retry declined, or "do not retry"──▶ canceled
 *   cancel now ──▶ canceled;  cancel at the end of the period / at a date ──▶ pending, then canceled
 */
export interface Terms {
  name: string;
  amount: string;
  currency: string;
  interval: string;
}

/** What the next charge bills: the terms changed by `PUT`, else the subscription's own. */
export function chargedTerms(subscription: Subscription): Terms {
  const terms = subscription.next_terms ?? subscription;
  return { name: terms.name, amount: terms.amount, currency: terms.currency, interval: terms.interval };
}

export interface Subscription extends Terms {
  id: string;
  project_id: string;
  customer_id: string;
  plan_id: string | null;
  token_id: string;
  /** Terms changed by `PUT`: the next charge bills them, and they are the terms from then on. */
  next_terms: Terms | null;
  trial_end_at: string | null;
  anchor_at: string;
  anchor_iteration: number;
  iteration: number;
  /** When `iteration` is due; null once the subscription is canceled. */
  iterate_at: string | null;
  activated: boolean;
  activated_at: string | null;
  /** Failed attempts at `iteration` and when the next one runs; null while payments go through. */
  dunning: Dunning | null;
  /**
   * Days after the due date each retry of a declined iteration runs: the environment's dunning
   * configuration when the subscription was made (`dunning_configuration`), else `DUNNING_DELAYS_DAYS`.
   * Absent on subscriptions made before it existed.
   */
  dunning_delays_days?: readonly number[];
  /** The invoice of the attempt in progress (created once per attempt). */
  attempt: Attempt | null;
  /** Billed with every renewal (`/subscriptions/{id}/addons`). Absent: none. */
  addons?: Addon[];
  /** Applied to the renewals while valid (`/subscriptions/{id}/discounts`). Absent: none. */
  discounts?: Discount[];
  /** Changes made since the last renewal, charged or credited with the next one. */
  prorations?: Proration[];
  /** Credit carried to the next renewal (an amount). Absent: none. */
  credit?: string;
  /** The fraction of a minor unit the prorations so far left over (`charges.ts`). */
  residue?: Residue;
  /**
   * The charge of iteration `due_charge.iteration`, fixed once that iteration is due: when its first
   * attempt is made, or when a change comes after its due time (which then cannot alter it). Every
   * attempt at the iteration charges exactly this.
   */
  due_charge?: Charge | null;
  trial_notice_sent: boolean;
  /**
   * The trial was ended or moved by `PUT trial_end_at`: the first charge's and the notice's jobs
   * then carry the date they were scheduled for, and one made for another date does nothing.
   */
  trial_moved?: boolean;
  cancel_at: string | null;
  canceled: boolean;
  canceled_at: string | null;
  cancellation_reason: string | null;
  metadata: Record<string, string>;
  return_url: string | null;
  cancel_url: string | null;
  sandbox: boolean;
  created_at: string;
  updated_at: string;
}

export interface Dunning {
  failed_attempts: number;
  next_retry_at: string | null;
  last_error_code: string | null;
  last_error_message: string | null;
}

export interface Attempt {
  iteration: number;
  /** 0: the iteration's due charge; 1, 2, 3: its retries. */
  number: number;
  invoice_id: string;
}

/**
 * Dunning: a declined iteration is tried again 1, 3 and 7 days after it was due; when the last
 * retry is declined too (or the issuer advises not to retry), the subscription is canceled with
 * `CANCELED_FOR_NON_PAYMENT` as its reason.
 */
export const DUNNING_DELAYS_DAYS = [1, 3, 7] as const;
export const CANCELED_FOR_NON_PAYMENT = "payment-failed";
/** `subscription.trial.ending_soon` goes out this many days before a trial ends. */
export const TRIAL_NOTICE_DAYS = 3;

export interface NewSubscription {
  projectId: string;
  sandbox: boolean;
  customerId: string;
  planId: string | null;
  tokenId: string;
  terms: Terms;
  trialEndAt: Date | null;
  cancelAt: string | null;
  metadata: Record<string, string>;
  returnUrl: string | null;
  cancelUrl: string | null;
  /** The environment's retry days (`dunning_configuration`), when it set its own. */
  dunningDelaysDays?: readonly number[];
}

/** A new subscription: its first iteration is due when its trial ends, or at once. */
export function newSubscription(input: NewSubscription, now: Date): Subscription {
  const firstDue = input.trialEndAt ?? now;
  return {
    id: newId("subscription"),
    project_id: input.projectId,
    customer_id: input.customerId,
    plan_id: input.planId,
    token_id: input.tokenId,
    ...input.terms,
    next_terms: null,
    trial_end_at: input.trialEndAt?.toISOString() ?? null,
    anchor_at: firstDue.toISOString(),
    anchor_iteration: 1,
    iteration: 1,
    iterate_at: firstDue.toISOString(),
    activated: false,
    activated_at: null,
    dunning: null,
    ...(input.dunningDelaysDays ? { dunning_delays_days: input.dunningDelaysDays } : {}),
    attempt: null,
    trial_notice_sent: false,
    cancel_at: input.cancelAt,
    canceled: false,
    canceled_at: null,
    cancellation_reason: null,
    metadata: input.metadata,
    return_url: input.returnUrl,
    cancel_url: input.cancelUrl,
    sandbox: input.sandbox,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
}

function interval(subscription: Terms): Interval {
  return parseInterval(subscription.interval);
}

/** When iteration `n` of the subscription is due (from its anchor, with its current interval). */
export function dueDate(subscription: Subscription, n: number): Date {
  return intervalsAfter(
    new Date(subscription.anchor_at),
    interval(subscription),
    n - subscription.anchor_iteration,
  );
}

/** The attempt of the current iteration due now: 0 for the charge, then each retry. */
export function currentAttemptNumber(subscription: Subscription): number {
  return subscription.dunning?.failed_attempts ?? 0;
}

/** When attempt `number` of the current iteration is due. */
export function attemptDueAt(subscription: Subscription, number: number): Date | null {
  if (subscription.iterate_at === null) return null;
  if (number === 0) return new Date(subscription.iterate_at);
  const days = (subscription.dunning_delays_days ?? DUNNING_DELAYS_DAYS)[number - 1];
  if (days === undefined) return null;
  return new Date(new Date(subscription.iterate_at).getTime() + days * 24 * 3600 * 1000);
}

/** The current iteration's attempt, with the invoice created for it. */
export function withAttempt(subscription: Subscription, invoiceId: string, now: Date): Subscription {
  return {
    ...subscription,
    attempt: {
      iteration: subscription.iteration,
      number: currentAttemptNumber(subscription),
      invoice_id: invoiceId,
    },
    updated_at: now.toISOString(),
  };
}

/**
 * The charge of the due iteration, fixed (`due_charge`) once `at` reaches its due time, with the
 * state it leaves: the terms it charged become the subscription's (a changed interval anchors at
 * this iteration, so its period is the first of the new interval), the prorations and credit it
 * took are gone, its discounts counted. Unchanged before the due time, or when fixed already.
 */
export function withDueCharge(subscription: Subscription, at: Date): Subscription {
  if (subscription.canceled || subscription.iterate_at === null) return subscription;
  if (subscription.due_charge?.iteration === subscription.iteration) return subscription;
  const dueAt = new Date(subscription.iterate_at);
  if (dueAt.getTime() > at.getTime()) return subscription;
  const terms = chargedTerms(subscription);
  const anchorChange =
    terms.interval !== subscription.interval
      ? { anchor_at: subscription.iterate_at, anchor_iteration: subscription.iteration }
      : {};
  const termed: Subscription = { ...subscription, ...terms, ...anchorChange, next_terms: null };
  const { charge, discounts } = renewalCharge({
    iteration: subscription.iteration,
    dueAt,
    period: { start: dueAt, end: dueDate(termed, subscription.iteration + 1) },
    currency: terms.currency,
    terms,
    addons: subscription.addons ?? [],
    discounts: subscription.discounts ?? [],
    prorations: subscription.prorations ?? [],
    credit: subscription.credit ?? "0",
  });
  return { ...termed, discounts, prorations: [], credit: charge.credit_left, due_charge: charge };
}

/**
 * The period already charged that a change now falls in (the one the last fixed charge paid for);
 * null before the first charge (a trial, or a first iteration not yet due): nothing to prorate.
 */
export function currentPeriod(subscription: Subscription): Period | null {
  if (subscription.canceled || subscription.iterate_at === null) return null;
  const n = subscription.iteration;
  if (subscription.due_charge?.iteration === n)
    return { start: new Date(subscription.iterate_at), end: dueDate(subscription, n + 1) };
  if (n < 2) return null;
  return { start: dueDate(subscription, n - 1), end: new Date(subscription.iterate_at) };
}

/**
 * The current iteration is paid (its `due_charge`, fixed now if an attempt made before charges
 * were fixed paid it): the next iteration is due one interval later.
 */
export function iterated(subscription: Subscription, now: Date): Subscription {
  const charged = withDueCharge(subscription, new Date(subscription.iterate_at ?? now.toISOString()));
  const next = charged.iteration + 1;
  const moved: Subscription = {
    ...charged,
    iteration: next,
    activated: true,
    activated_at: charged.activated_at ?? now.toISOString(),
    dunning: null,
    attempt: null,
    updated_at: now.toISOString(),
  };
  return { ...moved, iterate_at: dueDate(moved, next).toISOString() };
}

/** An attempt was declined: the next retry, if any is left. */
export function declined(
  subscription: Subscription,
  error: { code: string; message: string },
  now: Date,
): Subscription {
  const failed = currentAttemptNumber(subscription) + 1;
  const nextRetry = attemptDueAt(subscription, failed);
  return {
    ...subscription,
    dunning: {
      failed_attempts: failed,
      next_retry_at: nextRetry?.toISOString() ?? null,
      last_error_code: error.code,
      last_error_message: error.message,
    },
    attempt: null,
    updated_at: now.toISOString(),
  };
}

/** Whether a declined attempt leaves no retry: the last one, or the issuer advised not to retry. */
export function outOfRetries(subscription: Subscription, doNotRetry: boolean): boolean {
  return doNotRetry || attemptDueAt(subscription, currentAttemptNumber(subscription) + 1) === null;
}

export function canceled(subscription: Subscription, reason: string | null, now: Date): Subscription {
  return {
    ...subscription,
    canceled: true,
    canceled_at: now.toISOString(),
    cancellation_reason: reason,
    iterate_at: null,
    attempt: null,
    dunning: subscription.dunning ? { ...subscription.dunning, next_retry_at: null } : null,
    updated_at: now.toISOString(),
  };
}

/** Whether the subscription is trialing at `now`. */
export function inTrial(subscription: Subscription, now: Date): boolean {
  return subscription.trial_end_at !== null && Date.parse(subscription.trial_end_at) > now.getTime();
}

/**
 * The trial ended now or moved to `end`: the first iteration is due then (the anchor with it), and
 * a notice is owed again when the new date leaves time for one.
 */
export function withTrialEnd(
  subscription: Subscription,
  end: Date,
  noticeDue: boolean,
  now: Date,
): Subscription {
  return {
    ...subscription,
    trial_end_at: end.toISOString(),
    anchor_at: end.toISOString(),
    anchor_iteration: 1,
    iterate_at: end.toISOString(),
    trial_moved: true,
    trial_notice_sent: noticeDue ? false : subscription.trial_notice_sent,
    updated_at: now.toISOString(),
  };
}

/** The subscription as the API shows it (the reference's fields, and where it stands in dunning). */
export function presentSubscription(subscription: Subscription, now: Date) {
  const pastDue = subscription.dunning !== null && !subscription.canceled;
  const period = currentPeriod(subscription);
  return {
    id: subscription.id,
    project_id: subscription.project_id,
    plan_id: subscription.plan_id,
    customer_id: subscription.customer_id,
    token_id: subscription.token_id,
    name: subscription.name,
    amount: subscription.amount,
    currency: subscription.currency,
    interval: subscription.interval,
    trial_end_at: subscription.trial_end_at,
    activated: subscription.activated,
    active: !subscription.canceled && !pastDue && (subscription.activated || inTrial(subscription, now)),
    cancel_at: subscription.cancel_at,
    canceled: subscription.canceled,
    cancellation_reason: subscription.cancellation_reason,
    pending_cancellation: !subscription.canceled && subscription.cancel_at !== null,
    activated_at: subscription.activated_at,
    iterate_at: subscription.iterate_at,
    /** Iterations paid so far. */
    iterations: subscription.iteration - 1,
    past_due: pastDue,
    /** The next retry of a declined iteration; null while payments go through. */
    next_retry_at: pastDue ? (subscription.dunning?.next_retry_at ?? null) : null,
    failed_attempts: subscription.dunning?.failed_attempts ?? 0,
    last_payment_error: subscription.dunning
      ? { code: subscription.dunning.last_error_code, message: subscription.dunning.last_error_message }
      : null,
    next_terms: subscription.next_terms,
    /** The period the last charge paid for, which a change now is prorated over; null before any. */
    current_period_start: period?.start.toISOString() ?? null,
    current_period_end: period?.end.toISOString() ?? null,
    /** Credit carried to the next renewal (from prorations that credited more than it charged). */
    credit_balance: subscription.credit ?? zeroIn(subscription.currency),
    metadata: subscription.metadata,
    return_url: subscription.return_url,
    cancel_url: subscription.cancel_url,
    sandbox: subscription.sandbox,
    created_at: subscription.created_at,
  };
}

export type PresentedSubscription = ReturnType<typeof presentSubscription>;
