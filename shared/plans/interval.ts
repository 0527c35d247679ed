// The calculating date alone: `UTCDate` also formats, with three `Intl.DateTimeFormat` made at import
// (ICU's start-up, some 25 ms of every cold start).
import { UTCDateMini } from "@date-fns/utc/date/mini";
import { add, sub } from "date-fns";
import * as z from "../validation/zod.ts";

/**
 * Billing intervals and trial periods, written `1d2w3m4y`: one or more counts each followed by a
 * unit (`d` days, `w` weeks, `m` calendar months, `y` years), each unit at most once: `1m`, `2w`,
 * `1y6m`, `1m15d`. Calendar arithmetic is in UTC and always from the subscription's anchor, so an
 * anchor on the 31st stays on the last day of shorter months and comes back to the 31st:
 * Jan 31 → Feb 28 (29 in a leap year) → Mar 31.
 */
export interface Interval {
  years: number;
  months: number;
  weeks: number;
  days: number;
}

const UNITS = { y: "years", m: "months", w: "weeks", d: "days" } as const;
const PART = /(\d{1,4})([dwmy])/g;
/** Far beyond any real plan, and small enough that 2 years of daily iterations stay in range. */
const MAX_COUNT = 999;

/** Why `text` is not an interval, or undefined when it is one. */
export function intervalProblem(text: string): string | undefined {
  if (!/^(\d{1,4}[dwmy])+$/.test(text)) {
    return 'must be counts each followed by a unit (d, w, m or y), such as "1m" or "1y6m"';
  }
  const seen = new Set<string>();
  let total = 0;
  for (const [, count, unit] of text.matchAll(PART)) {
    if (seen.has(unit as string)) return `must name each unit once (${unit} is repeated)`;
    seen.add(unit as string);
    const value = Number(count);
    if (value > MAX_COUNT) return `counts are at most ${MAX_COUNT}`;
    total += value;
  }
  if (total === 0) return "must be longer than nothing";
  return undefined;
}

export function parseInterval(text: string): Interval {
  const problem = intervalProblem(text);
  if (problem) throw new RangeError(`"${text}" is not an interval: it ${problem}`);
  const interval: Interval = { years: 0, months: 0, weeks: 0, days: 0 };
  for (const [, count, unit] of text.matchAll(PART))
    interval[UNITS[unit as keyof typeof UNITS]] = Number(count);
  return interval;
}

/** The date `times` intervals after `anchor` (calendar months clamped to the month's last day). */
export function intervalsAfter(anchor: Date, interval: Interval, times: number): Date {
  const moved = add(new UTCDateMini(anchor.getTime()), {
    years: interval.years * times,
    months: interval.months * times,
    weeks: interval.weeks * times,
    days: interval.days * times,
  });
  return new Date(moved.getTime());
}

/** `at` minus a number of days (notices ahead of a date). */
export function daysBefore(at: Date, days: number): Date {
  return new Date(sub(new UTCDateMini(at.getTime()), { days }).getTime());
}

/** An interval field: required for `interval`, optional for `trial_period`. */
export const intervalText = z.string("must be an interval such as 1m").check(
  z.superRefine((value, ctx) => {
    const problem = intervalProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
);
