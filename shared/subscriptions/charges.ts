import { fromMinorUnits, toMinorUnits } from "../money.ts";

/**
 * What a subscription charges: pure arithmetic on minor units (`bigint`), never floats.
 *
 * A renewal charges, in advance, for the period it opens:
 *   1. the plan (the subscription's terms) and each add-on (`amount × quantity`): the period's
 *      recurring charges;
 *   2. its discounts, valid at the renewal's due time: first the `percent_off` ones, then the
 *      `amount_off` ones, each in the order it was added; each takes from what the ones before it
 *      left of the recurring charges, rounded half away from zero to the currency's minor unit,
 *      and never below zero;
 *   3. the prorations made since the last renewal (charged or credited at full price: discounts do
 *      not touch them);
 *   4. the credit carried from earlier renewals.
 * When prorations and credit bring the total below zero, the renewal charges nothing and the rest
 * is carried, as credit, to the next one: a credit is never lost.
 *
 * A proration is the change's value over the rest of the period it happens in, by the period's real
 * length (in milliseconds: month lengths and leap years count): `amount × (end − from) / (end −
 * start)`. Its fraction of a minor unit is not dropped: the residue is carried, exactly, to the
 * subscription's next proration, so that however many changes a year holds, what the prorations
 * charged differs from their exact sum by at most half a minor unit.
 */

export interface Addon {
  id: string;
  plan_id: string | null;
  /** `recurring`: billed with every renewal. */
  type: "recurring";
  name: string;
  /** Per unit, in the subscription's currency. */
  amount: string;
  quantity: number;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

export interface Discount {
  id: string;
  coupon_id: string | null;
  name: string | null;
  amount_off: string | null;
  percent_off: string | null;
  /** How many renewals it applies to; null: all of them. */
  iteration_count: number | null;
  /** Renewals it applied to so far. */
  applied_count: number;
  /** It applies to the renewals due before this date; null: no end. */
  expires_at: string | null;
  metadata: Record<string, string>;
  created_at: string;
}

/** A change's value over the rest of a period already charged: billed with the next renewal. */
export interface Proration {
  name: string;
  /** Signed: a charge (positive) or a credit (negative). */
  amount: string;
  /** The part of the period it covers, `[from, to)`. */
  from: string;
  to: string;
  addon_id: string | null;
  created_at: string;
}

export type LineType = "plan" | "addon" | "discount" | "proration" | "credit";

export interface ChargeLine {
  type: LineType;
  name: string;
  /** Signed: what the line adds to the charge (discounts and credits are negative). */
  amount: string;
  quantity: number;
  unit_amount: string;
  addon_id?: string;
  discount_id?: string;
  coupon_id?: string;
  /** The days the line pays for (plan, add-ons, prorations). */
  period_start?: string;
  period_end?: string;
}

/** A renewal's charge: its lines, what is charged (never below zero) and the credit left after it. */
export interface Charge {
  iteration: number;
  due_at: string;
  period_start: string;
  period_end: string;
  lines: ChargeLine[];
  amount: string;
  credit_left: string;
}

/** A fraction of a minor unit, `num / den` (decimal strings of integers, `den` > 0). */
export interface Residue {
  num: string;
  den: string;
}

export const NO_RESIDUE: Residue = { num: "0", den: "1" };

export interface Period {
  start: Date;
  end: Date;
}

const minor = (amount: string, currency: string) => toMinorUnits(amount, currency);
/** A signed minor-unit value written as an amount of the currency ("-3.50"). */
export function signedAmount(value: bigint, currency: string): string {
  return value < 0n ? `-${fromMinorUnits(-value, currency)}` : fromMinorUnits(value, currency);
}
/** A signed amount ("-3.50") in minor units. */
export function signedMinor(amount: string, currency: string): bigint {
  return amount.startsWith("-") ? -minor(amount.slice(1), currency) : minor(amount, currency);
}

/** The smaller of two minor-unit values (`Math.min` takes no `bigint`). */
function smaller(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a < 0n ? -a : a, b < 0n ? -b : b];
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** `num / den` rounded to an integer, halves away from zero (`den` > 0). */
export function roundHalfAway(num: bigint, den: bigint): bigint {
  const sign = num < 0n ? -1n : 1n;
  const magnitude = num * sign;
  return sign * ((2n * magnitude + den) / (2n * den));
}

/**
 * The minor units a change of `perPeriod` (signed, minor units per period) is worth over `[from,
 * period.end)`, with the residue carried in and the one to carry on.
 */
export function prorate(
  perPeriod: bigint,
  from: Date,
  period: Period,
  carried: Residue,
): { value: bigint; residue: Residue } {
  const length = BigInt(period.end.getTime() - period.start.getTime());
  const rest = BigInt(period.end.getTime() - from.getTime());
  const carriedNum = BigInt(carried.num);
  const carriedDen = BigInt(carried.den);
  let num = perPeriod * rest * carriedDen + carriedNum * length;
  let den = length * carriedDen;
  const divisor = gcd(num, den) || 1n;
  num /= divisor;
  den /= divisor;
  const value = roundHalfAway(num, den);
  const left = num - value * den;
  const leftDivisor = gcd(left, den) || 1n;
  return { value, residue: { num: (left / leftDivisor).toString(), den: (den / leftDivisor).toString() } };
}

/** Whether a discount still applies to a renewal due at `dueAt`. */
export function discountApplies(discount: Discount, dueAt: Date): boolean {
  if (discount.expires_at !== null && Date.parse(discount.expires_at) <= dueAt.getTime()) return false;
  return discount.iteration_count === null || discount.applied_count < discount.iteration_count;
}

/** Discounts in the order they apply: percentages first, then amounts, each in the order added. */
export function discountOrder(discounts: readonly Discount[]): Discount[] {
  const rank = (discount: Discount) => (discount.percent_off !== null ? 0 : 1);
  return [...discounts].sort(
    (a, b) => rank(a) - rank(b) || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0),
  );
}

/** `percent` ("12.5") of `value` minor units, rounded half away from zero. */
function percentOf(value: bigint, percent: string): bigint {
  const [whole = "0", fraction = ""] = percent.split(".");
  const scale = 10n ** BigInt(fraction.length);
  return roundHalfAway(value * BigInt(`${whole}${fraction}`), 100n * scale);
}

export interface RenewalInput {
  iteration: number;
  dueAt: Date;
  period: Period;
  currency: string;
  terms: { name: string; amount: string };
  addons: readonly Addon[];
  discounts: readonly Discount[];
  prorations: readonly Proration[];
  /** Credit carried from earlier renewals (an amount, zero or more). */
  credit: string;
}

/**
 * A renewal's charge, and the discounts as they stand after it (each that applied counted; those
 * expired or used up left out).
 */
export function renewalCharge(input: RenewalInput): { charge: Charge; discounts: Discount[] } {
  const { currency, period } = input;
  const money = (value: bigint) => signedAmount(value, currency);
  const periodOf = { period_start: period.start.toISOString(), period_end: period.end.toISOString() };
  const lines: ChargeLine[] = [];
  const planAmount = minor(input.terms.amount, currency);
  lines.push({
    type: "plan",
    name: input.terms.name,
    amount: money(planAmount),
    quantity: 1,
    unit_amount: input.terms.amount,
    ...periodOf,
  });
  let recurring = planAmount;
  for (const addon of input.addons) {
    const value = minor(addon.amount, currency) * BigInt(addon.quantity);
    recurring += value;
    lines.push({
      type: "addon",
      name: addon.name,
      amount: money(value),
      quantity: addon.quantity,
      unit_amount: addon.amount,
      addon_id: addon.id,
      ...periodOf,
    });
  }
  let left = recurring;
  const applied = new Set<string>();
  for (const discount of discountOrder(input.discounts)) {
    if (!discountApplies(discount, input.dueAt)) continue;
    applied.add(discount.id);
    const wanted =
      discount.percent_off !== null
        ? percentOf(left, discount.percent_off)
        : minor(discount.amount_off ?? "0", currency);
    const value = smaller(wanted, left);
    left -= value;
    lines.push({
      type: "discount",
      name: discount.name ?? (discount.percent_off !== null ? `${discount.percent_off}% off` : "Discount"),
      amount: money(-value),
      quantity: 1,
      unit_amount: money(-value),
      discount_id: discount.id,
      ...(discount.coupon_id ? { coupon_id: discount.coupon_id } : {}),
    });
  }
  let total = left;
  for (const proration of input.prorations) {
    total += signedMinor(proration.amount, currency);
    lines.push({
      type: "proration",
      name: proration.name,
      amount: proration.amount,
      quantity: 1,
      unit_amount: proration.amount,
      ...(proration.addon_id ? { addon_id: proration.addon_id } : {}),
      period_start: proration.from,
      period_end: proration.to,
    });
  }
  const credit = minor(input.credit, currency);
  if (credit > 0n) {
    // The whole credit is shown as carried in; what the charge cannot use goes on to the next one.
    total -= credit;
    lines.push({
      type: "credit",
      name: "Credit carried from earlier changes",
      amount: money(-credit),
      quantity: 1,
      unit_amount: money(-credit),
    });
  }
  const charged = total > 0n ? total : 0n;
  const charge: Charge = {
    iteration: input.iteration,
    due_at: input.dueAt.toISOString(),
    ...periodOf,
    lines,
    amount: fromMinorUnits(charged, currency),
    credit_left: fromMinorUnits(total < 0n ? -total : 0n, currency),
  };
  const discounts = input.discounts.flatMap((discount) => {
    if (!applied.has(discount.id)) return discountApplies(discount, input.dueAt) ? [discount] : [];
    const counted = { ...discount, applied_count: discount.applied_count + 1 };
    return counted.iteration_count !== null && counted.applied_count >= counted.iteration_count
      ? []
      : [counted];
  });
  return { charge, discounts };
}
