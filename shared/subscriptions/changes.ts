import { invalidField } from "../http/errors.ts";
import { toMinorUnits } from "../money.ts";
import {
  type Addon,
  type Charge,
  NO_RESIDUE,
  type Period,
  type Proration,
  prorate,
  signedAmount,
  signedMinor,
} from "./charges.ts";
import { currentPeriod, iterated, type Subscription, withDueCharge } from "./subscription.ts";

/**
 * Changes of what a subscription bills (add-ons, a plan changed now), pure: each is applied to the
 * subscription as it stands at the change's time, and a change prorated is charged or credited for
 * the rest of the period already charged (`charges.ts`), with the next renewal.
 *
 * A change never alters a charge already due: before any change, the due iteration's charge is
 * fixed (`withDueCharge`) from the subscription as it stood, and the change then falls in the period
 * that charge pays for.
 */

/** How a change is billed: `prorate`d from `at` (default: now), or from the next renewal on. */
export interface Timing {
  prorate: boolean;
  at: Date | null;
  /** Answer what the change would bill, changing nothing. */
  preview: boolean;
}

/** At most this many add-ons and discounts on a subscription. */
export const MAX_ADDONS = 30;
export const MAX_DISCOUNTS = 10;
/**
 * Prorations waiting for the next renewal: past this many, they are summed into one line, so that
 * a renewal's invoice stays within its 100 details (1 plan, 30 add-ons, 10 discounts, 1 credit).
 */
export const MAX_PRORATIONS = 50;

/** The subscription ready for a change at `now`: the due iteration's charge fixed first. */
export function readyForChange(subscription: Subscription, now: Date): Subscription {
  return withDueCharge(subscription, now);
}

/** An add-on's worth over one period, in minor units. */
export function addonValue(addon: Pick<Addon, "amount" | "quantity">, currency: string): bigint {
  return toMinorUnits(addon.amount, currency) * BigInt(addon.quantity);
}

const DAY_MS = 24 * 3600 * 1000;

function days(ms: number): string {
  return String(Math.round((ms / DAY_MS) * 100) / 100);
}

/** When in the current period a prorated change counts from: `timing.at` checked, else now. */
function prorationStart(period: Period, timing: Timing, now: Date): Date {
  if (timing.at === null)
    return new Date(Math.min(Math.max(now.getTime(), period.start.getTime()), period.end.getTime()));
  if (timing.at.getTime() < period.start.getTime() || timing.at.getTime() >= period.end.getTime()) {
    throw invalidField(
      "proration_date",
      `must be within the current period, from ${period.start.toISOString()} to before ${period.end.toISOString()}`,
    );
  }
  return timing.at;
}

/**
 * The subscription with the proration of a change worth `perPeriod` minor units more (or less,
 * negative) per period, and that proration; none when not prorated, before any charge, or worth
 * nothing.
 */
export function withProration(
  subscription: Subscription,
  change: { perPeriod: bigint; name: string; addonId: string | null },
  timing: Timing,
  now: Date,
): { subscription: Subscription; proration: Proration | null } {
  const period = currentPeriod(subscription);
  if (!timing.prorate || period === null) return { subscription, proration: null };
  const from = prorationStart(period, timing, now);
  if (change.perPeriod === 0n || from.getTime() >= period.end.getTime())
    return { subscription, proration: null };
  const { value, residue } = prorate(change.perPeriod, from, period, subscription.residue ?? NO_RESIDUE);
  const proration: Proration = {
    name: `${change.name}: ${days(period.end.getTime() - from.getTime())} of ${days(
      period.end.getTime() - period.start.getTime(),
    )} days`,
    amount: signedAmount(value, subscription.currency),
    from: from.toISOString(),
    to: period.end.toISOString(),
    addon_id: change.addonId,
    created_at: now.toISOString(),
  };
  const prorations = [...(subscription.prorations ?? []), proration];
  return {
    subscription: { ...subscription, residue, prorations: capped(prorations, subscription.currency) },
    proration,
  };
}

/** The prorations, past `MAX_PRORATIONS` summed into one line covering them all. */
function capped(prorations: Proration[], currency: string): Proration[] {
  if (prorations.length <= MAX_PRORATIONS) return prorations;
  const total = prorations.reduce((sum, line) => sum + signedMinor(line.amount, currency), 0n);
  const first = prorations[0] as Proration;
  const last = prorations[prorations.length - 1] as Proration;
  return [
    {
      name: `${prorations.length} changes this period`,
      amount: signedAmount(total, currency),
      from: prorations.map((line) => line.from).sort()[0] ?? first.from,
      to: last.to,
      addon_id: null,
      created_at: last.created_at,
    },
  ];
}

/**
 * The next charge that a change made now would be billed with: the next iteration's, as it would
 * be fixed at its due time if nothing else changed (the one after a due iteration being retried).
 * Null when none comes (canceled, or ending before it).
 */
export function upcomingCharge(subscription: Subscription, now: Date): Charge | null {
  if (subscription.canceled || subscription.iterate_at === null) return null;
  const upcoming =
    subscription.due_charge?.iteration === subscription.iteration
      ? iterated(subscription, now)
      : subscription;
  if (upcoming.iterate_at === null) return null;
  if (upcoming.cancel_at !== null && Date.parse(upcoming.cancel_at) <= Date.parse(upcoming.iterate_at))
    return null;
  return withDueCharge(upcoming, new Date(upcoming.iterate_at)).due_charge ?? null;
}
