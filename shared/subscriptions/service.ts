import { usableCard } from "../cards/service.ts";
import { nowIn } from "../clock.ts";
import { config } from "../config.ts";
import type { Coupon } from "../coupons/coupon.ts";
import { redeemableCoupon } from "../coupons/service.ts";
import { getCustomer } from "../customers/service.ts";
import { findCustomer } from "../customers/store.ts";
import { keys } from "../db/keys.ts";
import { type PageRequest, pageOfList } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import { eventWrites } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, conflict, invalidField, notFound, validationFailed } from "../http/errors.ts";
import { readFlag } from "../http/flags.ts";
import type { Input } from "../http/input.ts";
import { isId, newId } from "../ids.ts";
import { amountProblemIn, toMinorUnits } from "../money.ts";
import { logger } from "../observability/logger.ts";
import { findTokenItem, transactionsByIds } from "../payments/store.ts";
import { presentTransaction } from "../payments/transaction.ts";
import { daysBefore, intervalsAfter, parseInterval } from "../plans/interval.ts";
import { livePlan } from "../plans/service.ts";
import { dunningDelaysDays } from "../projects/environment.ts";
import { createToken } from "../tokens/service.ts";
import { tokenFromItem } from "../tokens/store.ts";
import { parseInput } from "../validation/parse.ts";
import {
  dropMovedTrialWork,
  dropScheduledWork,
  nextChargeJob,
  runSubscriptionJob,
  scheduleCancellation,
  scheduleNextCharge,
  scheduleTrialNotice,
} from "./billing.ts";
import { type BillingAnswer, concurrentChange, readTiming, subscriptionOf } from "./billing-change.ts";
import { readyForChange, upcomingCharge, withProration } from "./changes.ts";
import type { Proration } from "./charges.ts";
import { discountFromCoupon, redemptionWrites, withDiscount } from "./discounts.ts";
import {
  type CreateSubscriptionFields,
  cancelSubscriptionInput,
  createSubscriptionInput,
  type UpdateSubscriptionFields,
  updateSubscriptionInput,
} from "./schema.ts";
import {
  commitSubscriptionChange,
  customerSubscriptions,
  listSubscriptions,
  subscriptionInserts,
  subscriptionReplace,
  subscriptionTransactionIds,
} from "./store.ts";
import {
  canceled,
  chargedTerms,
  currentPeriod,
  inTrial,
  newSubscription,
  type PresentedSubscription,
  presentSubscription,
  type Subscription,
  type Terms,
  TRIAL_NOTICE_DAYS,
  withTrialEnd,
} from "./subscription.ts";

/**
 * Subscriptions: `POST`, `GET`, `PUT`, `DELETE /subscriptions`, and a customer's list. Billing
 * itself runs as scheduled jobs (`billing.ts`).
 */

/** The furthest a trial or a cancellation may be set, ahead of now. */
const MAX_AHEAD_DAYS = 2 * 366;

function inFuture(field: string, at: string | undefined | null, now: Date): Date | null {
  if (at === undefined || at === null) return null;
  const date = new Date(at);
  if (date.getTime() <= now.getTime()) throw invalidField(field, "must be in the future");
  if (date.getTime() > now.getTime() + MAX_AHEAD_DAYS * 24 * 3600 * 1000)
    throw invalidField(field, "must be within 2 years");
  return date;
}

/** The terms billed: the plan's (by `plan_id`), each overridden by the same field sent; or all sent. */
async function termsOf(
  caller: Caller,
  fields: Pick<CreateSubscriptionFields, "plan_id" | "name" | "amount" | "currency" | "interval">,
): Promise<{ terms: Terms; planId: string | null; trialPeriod: string | null }> {
  const plan = fields.plan_id ? (await livePlan(caller, fields.plan_id)).value : undefined;
  const merged = {
    name: fields.name ?? plan?.name,
    amount: fields.amount ?? plan?.amount,
    currency: fields.currency ?? plan?.currency,
    interval: fields.interval ?? plan?.interval,
  };
  const missing = Object.entries(merged)
    .filter(([, value]) => value === undefined || value === null)
    .map(([name]) => ({ name, message: "is required without a plan_id" }));
  if (missing.length > 0) throw validationFailed(`missing-${missing[0]?.name}`, missing);
  const terms = merged as Terms;
  const problem = amountProblemIn(terms.amount, terms.currency);
  if (problem) throw invalidField("amount", problem);
  if (/^0(\.0+)?$/.test(terms.amount)) throw invalidField("amount", "must be above zero");
  return { terms, planId: plan?.id ?? null, trialPeriod: plan?.trial_period ?? null };
}

/** A customer token of the customer that can pay: the check that it still can, with the creation. */
async function tokenCheck(caller: Caller, customerId: string, tokenId: string): Promise<TransactItem> {
  const item = isId("token", tokenId)
    ? await findTokenItem(caller.projectId, customerId, tokenId)
    : undefined;
  if (!item) throw notFound("token", tokenId);
  const token = tokenFromItem(item);
  if (
    token.card_id === null ||
    (token.verification_status !== "success" && token.verification_status !== "not-requested")
  ) {
    throw new ApiError(400, "request.token.not-chargeable", `Customer token ${tokenId} cannot be charged.`);
  }
  return {
    ConditionCheck: {
      TableName: config.tableName,
      Key: keys.child(caller.projectId, customerId, "token", tokenId),
      ConditionExpression: "attribute_exists(pk)",
    },
  };
}

/**
 * `POST /subscriptions`. The subscription is created with its `subscription.created` event and the
 * request's stored answer in one transaction, after its first jobs are scheduled (a schedule
 * without a subscription does nothing). A card as source becomes a customer token in that same
 * transaction. Without a trial, the first iteration is due at once: it is charged right after, by
 * the same job the scheduler would run (the answer is the subscription as created).
 */
export async function createSubscription(
  caller: Caller,
  input: unknown,
  commit: (presented: PresentedSubscription) => TransactItem[],
): Promise<PresentedSubscription> {
  const fields = parseInput(createSubscriptionInput, input);
  if (!isId("customer", fields.customer_id)) throw notFound("customer", fields.customer_id);
  const now = nowIn(caller.environment);
  // A card source is read in the same round as the customer and the plan; its refusal, if any,
  // is raised once the customer and the plan are checked.
  const card = fields.source && isId("card", fields.source) ? usableCard(caller, fields.source) : undefined;
  card?.catch(() => {});
  const [customer, { terms, planId, trialPeriod }] = await Promise.all([
    findCustomer(caller.projectId, fields.customer_id),
    termsOf(caller, fields),
  ]);
  if (!customer) throw notFound("customer", fields.customer_id);
  if (customer.currency && customer.currency !== terms.currency) {
    throw invalidField(
      "currency",
      `must be ${customer.currency}, the currency customer ${customer.id} pays in`,
    );
  }
  if (!fields.source)
    throw invalidField("source", "is required: a customer token or a card", "missing-source");
  const coupon = fields.coupon_id ? await redeemableCoupon(caller, fields.coupon_id, now) : undefined;
  const trialEnd =
    inFuture("trial_end_at", fields.trial_end_at, now) ??
    (trialPeriod ? intervalsAfter(now, parseInterval(trialPeriod), 1) : null);
  const cancelAt = inFuture("cancel_at", fields.cancel_at, now);

  const id = newId("subscription");
  const discount = coupon ? discountFromCoupon(coupon, terms, {}, now) : undefined;
  const build = (tokenId: string): Subscription => ({
    ...newSubscription(
      {
        projectId: caller.projectId,
        sandbox: caller.sandbox,
        customerId: customer.id,
        planId,
        tokenId,
        terms,
        trialEndAt: trialEnd,
        cancelAt: cancelAt?.toISOString() ?? null,
        metadata: fields.metadata ?? {},
        returnUrl: fields.return_url ?? null,
        cancelUrl: fields.cancel_url ?? null,
        dunningDelaysDays: dunningDelaysDays(caller.environment),
      },
      now,
    ),
    id,
    ...(discount ? { discounts: [discount] } : {}),
  });
  const writes = (subscription: Subscription) => {
    const presented = presentSubscription(subscription, now);
    return [
      ...redemptionWrites(coupon, now),
      ...subscriptionInserts(subscription),
      ...eventWrites(
        caller.projectId,
        [{ name: "subscription.created", data: { subscription: presented } }],
        now,
      ),
      ...commit(presented),
    ];
  };

  // The card's refusal, if any, comes now: before anything is scheduled for a subscription that
  // cannot be made (and the round trips stay in order: the reads, the schedule, the write).
  if (card) await card;

  // Scheduled first: no crash can leave a subscription without its jobs.
  const planned = build("tok_pending");
  await scheduleTrialNotice(caller, planned);
  await scheduleCancellation(caller, planned);
  if (trialEnd) await scheduleNextCharge(caller, planned);

  const source = fields.source;
  const created = await withCouponRefusal(caller, coupon, async () => {
    if (isId("card", source)) {
      let made: Subscription | undefined;
      const commitWith = (token: { id: string }) => {
        made = build(token.id);
        return writes(made);
      };
      await createToken(caller, customer.id, { source }, commitWith, undefined, { customer, card });
      return made as Subscription;
    }
    const made = build(source);
    await transactWrite([...writes(made), await tokenCheck(caller, customer.id, source)]);
    return made;
  });
  if (!trialEnd) await chargeNow(caller, created);
  return presentSubscription(created, now);
}

/**
 * Runs the write that redeems `coupon` (with the change that applies it): when it fails on a
 * condition and the coupon can no longer be redeemed (used up, expired or ended meanwhile), that
 * is the answer; any other failure is.
 */
async function withCouponRefusal<T>(
  caller: Caller,
  coupon: Coupon | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (coupon && failedConditions(error)?.length) {
      await redeemableCoupon(caller, coupon.id, nowIn(caller.environment));
    }
    throw error;
  }
}

/** Charges the subscription's due iteration now (its scheduled job covers a failure here). */
async function chargeNow(caller: Caller, subscription: Subscription): Promise<void> {
  await scheduleNextCharge(caller, subscription);
  try {
    await runSubscriptionJob(nextChargeJob(subscription), { immediate: true });
  } catch (error) {
    logger.warn("A subscription's charge did not complete; its scheduled job runs it again", {
      subscription_id: subscription.id,
      error,
    });
  }
}

export async function getSubscription(caller: Caller, id: string): Promise<PresentedSubscription> {
  return presentSubscription((await subscriptionOf(caller, id)).subscription, nowIn(caller.environment));
}

/** `GET /subscriptions/{id}/customers`: the subscription's customer. */
export async function customerOfSubscription(caller: Caller, id: string) {
  const { subscription } = await subscriptionOf(caller, id);
  return getCustomer(caller, subscription.customer_id);
}

/**
 * `GET /subscriptions/{id}/transactions`: the transactions of its renewals (one per attempt that
 * reached a payment), newest first by default like every list, a page at a time.
 */
export async function pageOfSubscriptionTransactions(caller: Caller, id: string, page: PageRequest) {
  const [found, ids] = await Promise.all([
    subscriptionOf(caller, id),
    isId("subscription", id) ? subscriptionTransactionIds(caller.projectId, id) : Promise.resolve([]),
  ]);
  const result = pageOfList(
    ids.map((transactionId) => ({ id: transactionId })),
    page,
  );
  const records = await transactionsByIds(
    found.subscription.project_id,
    result.items.map((item) => item.id),
  );
  return { ...result, items: records.map(presentTransaction) };
}

export async function pageOfSubscriptions(caller: Caller, page: PageRequest) {
  const result = await listSubscriptions(caller.projectId, page);
  const now = nowIn(caller.environment);
  return { ...result, items: result.items.map((item) => presentSubscription(item, now)) };
}

/** `GET /customers/{id}/subscriptions`: the customer's few subscriptions, paged. */
export async function pageOfCustomerSubscriptions(caller: Caller, customerId: string, page: PageRequest) {
  const customer = isId("customer", customerId)
    ? await findCustomer(caller.projectId, customerId)
    : undefined;
  if (!customer) throw notFound("customer", customerId);
  const result = pageOfList(await customerSubscriptions(caller.projectId, customerId), page);
  const now = nowIn(caller.environment);
  return { ...result, items: result.items.map((item) => presentSubscription(item, now)) };
}

/**
 * `PUT /subscriptions/{id}`: a new source (a card becomes a customer token), plan or terms, metadata,
 * URLs, a cancellation date, or a coupon (`coupon_id`, a discount from the next renewal on). New
 * terms apply from the next renewal on; with `prorate` (and the same interval) they apply now, and
 * the difference over the rest of the current period (from `proration_date`) is charged or credited
 * with the next renewal. `preview` answers what the change would bill and changes nothing. A new
 * source given while an iteration is past due retries it at once.
 */
export async function changeSubscription(
  caller: Caller,
  id: string,
  input: { query: Input; body: Input },
): Promise<{ subscription: PresentedSubscription } & Partial<BillingAnswer>> {
  const fields: UpdateSubscriptionFields = parseInput(updateSubscriptionInput, input.body);
  const timing = readTiming(input);
  const now = nowIn(caller.environment);
  const coupon = fields.coupon_id ? await redeemableCoupon(caller, fields.coupon_id, now) : undefined;
  const current = await subscriptionOf(caller, id);
  if (current.subscription.canceled)
    throw conflict("request.subscription.canceled", `Subscription ${id} is canceled.`);
  const trialEnd = newTrialEnd(current.subscription, fields.trial_end_at, now);
  // A change after the due time leaves the due iteration's charge as it was due.
  const before = readyForChange(current.subscription, now);
  const changesTerms = [fields.plan_id, fields.name, fields.amount, fields.currency, fields.interval].some(
    (value) => value !== undefined,
  );
  const nextTerms = changesTerms
    ? (
        await termsOf(caller, {
          plan_id: fields.plan_id,
          ...(fields.plan_id ? {} : chargedTerms(before)),
          ...definedTerms(fields),
        })
      ).terms
    : null;
  if (nextTerms && nextTerms.currency !== before.currency) {
    throw invalidField(
      "currency",
      "cannot change: cancel and create another subscription in another currency",
    );
  }
  const prorated = nextTerms !== null && timing.prorate && currentPeriod(before) !== null;
  if (prorated && nextTerms.interval !== before.interval) {
    throw invalidField(
      "prorate",
      "cannot prorate a change of interval: the new interval starts with the next renewal (send prorate=false)",
    );
  }
  const cancelAt =
    fields.cancel_at === undefined
      ? before.cancel_at
      : (inFuture("cancel_at", fields.cancel_at, now)?.toISOString() ?? null);

  let proration: Proration | null = null;
  const change = (tokenId: string): Subscription => {
    let next: Subscription = {
      ...before,
      token_id: tokenId,
      next_terms: nextTerms ?? before.next_terms,
      plan_id: fields.plan_id ?? before.plan_id,
      cancel_at: cancelAt,
      metadata: fields.metadata ?? before.metadata,
      return_url: fields.return_url !== undefined ? fields.return_url : before.return_url,
      cancel_url: fields.cancel_url !== undefined ? fields.cancel_url : before.cancel_url,
      updated_at: now.toISOString(),
    };
    if (trialEnd) next = withTrialEnd(next, trialEnd.at, trialEnd.noticeDue, now);
    if (prorated) {
      // The new terms from now on: what the rest of the period is worth more (or less).
      const perPeriod =
        toMinorUnits(nextTerms.amount, before.currency) - toMinorUnits(before.amount, before.currency);
      const made = withProration(
        { ...next, ...nextTerms, next_terms: null },
        { perPeriod, name: `${before.name} → ${nextTerms.name}`, addonId: null },
        timing,
        now,
      );
      next = made.subscription;
      proration = made.proration;
    }
    if (coupon) next = withDiscount(next, discountFromCoupon(coupon, next, {}, now));
    return next;
  };
  if (timing.preview) {
    const next = change(fields.source ?? before.token_id);
    return {
      subscription: presentSubscription(next, now),
      preview: true,
      proration,
      upcoming_charge: upcomingCharge(next, now),
    };
  }
  const writes = (next: Subscription) => [
    subscriptionReplace(current, next),
    ...eventWrites(
      caller.projectId,
      [
        {
          name: "subscription.updated",
          data: { subscription: presentSubscription(next, now), ...(proration ? { proration } : {}) },
        },
      ],
      now,
    ),
    ...redemptionWrites(coupon, now),
  ];

  if (trialEnd) {
    // Scheduled first, as on creation: no crash can leave the moved first charge without its job
    // (one made for a change that then fails finds another date and does nothing).
    const planned = change(before.token_id);
    await scheduleTrialNotice(caller, planned);
    await scheduleNextCharge(caller, planned);
  }
  const source = fields.source;
  const done = await withCouponRefusal(caller, coupon, async () => {
    if (source !== undefined && isId("card", source)) {
      let made: Subscription | undefined;
      await createToken(caller, before.customer_id, { source }, (token) => {
        made = change(token.id);
        return writes(made);
      });
      return made as Subscription;
    }
    const made = change(source ?? before.token_id);
    const checks = source !== undefined ? [await tokenCheck(caller, before.customer_id, source)] : [];
    if ((await commitSubscriptionChange([...writes(made), ...checks])) === "changed")
      throw concurrentChange(id);
    return made;
  });
  if (done.cancel_at !== before.cancel_at) await scheduleCancellation(caller, done);
  if (trialEnd) await dropMovedTrialWork(before, done);
  // A new way to pay during dunning: the past-due iteration is tried again now; a trial ended now
  // charges its first iteration now.
  if ((source !== undefined && done.dunning !== null) || trialEnd?.now) await chargeNow(caller, done);
  const answer = await getSubscription(caller, id);
  return prorated || coupon
    ? { subscription: answer, preview: false, proration, upcoming_charge: upcomingCharge(done, now) }
    : { subscription: answer };
}

/**
 * The trial's new end asked for (`trial_end_at`: `now` or a date ahead), or undefined when none is:
 * only a subscription in its trial has one to end or move (409 naming where it stands).
 */
function newTrialEnd(
  subscription: Subscription,
  asked: string | null | undefined,
  now: Date,
): { at: Date; now: boolean; noticeDue: boolean } | undefined {
  if (asked === undefined || asked === null) return undefined;
  if (!inTrial(subscription, now) || subscription.iteration !== 1 || subscription.dunning !== null) {
    const state = subscription.activated
      ? "active (its first iteration was charged)"
      : subscription.dunning !== null
        ? "past due (its first charge was declined)"
        : subscription.trial_end_at === null
          ? "without a trial"
          : "past its trial (its first charge is due)";
    throw conflict(
      "request.subscription.not-trialing",
      `Subscription ${subscription.id} is ${state}: only a trial can be ended or moved.`,
    );
  }
  if (asked === "now") return { at: now, now: true, noticeDue: false };
  const at = inFuture("trial_end_at", asked, now) as Date;
  return { at, now: false, noticeDue: daysBefore(at, TRIAL_NOTICE_DAYS).getTime() > now.getTime() };
}

function definedTerms(fields: UpdateSubscriptionFields): Partial<Terms> {
  return Object.fromEntries(
    (["name", "amount", "currency", "interval"] as const).flatMap((name) =>
      fields[name] !== undefined && fields[name] !== null ? [[name, fields[name]]] : [],
    ),
  );
}

/**
 * `DELETE /subscriptions/{id}`: cancels now, or at the end of the period paid for
 * (`cancel_at_end=true`), or at `cancel_at`; `cancellation_reason` is kept with it.
 */
export async function cancelSubscription(
  caller: Caller,
  id: string,
  input: { query: Input; body: Input },
): Promise<PresentedSubscription> {
  const fields = parseInput(cancelSubscriptionInput, { ...input.query, ...input.body });
  const atEnd = readFlag(input, "cancel_at_end");
  const now = nowIn(caller.environment);
  const current = await subscriptionOf(caller, id);
  const before = current.subscription;
  if (before.canceled)
    throw conflict("request.subscription.canceled", `Subscription ${id} is canceled already.`);
  const reason = fields.cancellation_reason ?? null;
  const at = atEnd
    ? before.trial_end_at && Date.parse(before.trial_end_at) > now.getTime()
      ? before.trial_end_at
      : before.iterate_at
    : (inFuture("cancel_at", fields.cancel_at, now)?.toISOString() ?? null);
  if (at === null) {
    const next = canceled(before, reason, now);
    const outcome = await commitSubscriptionChange([
      subscriptionReplace(current, next),
      ...eventWrites(
        caller.projectId,
        [{ name: "subscription.canceled", data: { subscription: presentSubscription(next, now) } }],
        now,
      ),
    ]);
    if (outcome === "changed") throw concurrentChange(id);
    await dropScheduledWork(before);
    return presentSubscription(next, now);
  }
  const next = { ...before, cancel_at: at, cancellation_reason: reason, updated_at: now.toISOString() };
  await scheduleCancellation(caller, next);
  const outcome = await commitSubscriptionChange([
    subscriptionReplace(current, next),
    ...eventWrites(
      caller.projectId,
      [{ name: "subscription.updated", data: { subscription: presentSubscription(next, now) } }],
      now,
    ),
  ]);
  if (outcome === "changed") throw concurrentChange(id);
  return presentSubscription(next, now);
}
