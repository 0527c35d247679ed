import { MAX_ADVANCE_DAYS } from "../../shared/sandbox/clock.ts";

/**
 * Known calendars for tests on the sandbox clock, which moves forward only: amounts computed by
 * hand need the month lengths of a given kind of year (31-day January, 28 or 29-day February), so a
 * test takes the first such year after the real date, and writes its dates in it.
 */
export const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** The first year starting after the real date for which `fits` holds. */
export function calendarYear(fits: (year: number) => boolean): number {
  let year = new Date().getUTCFullYear() + 1;
  while (!fits(year)) year += 1;
  return year;
}

/** The first year after the real date with a 28-day February, and the first leap year. */
export const COMMON_YEAR = calendarYear((year) => !isLeapYear(year));
export const LEAP_YEAR = calendarYear(isLeapYear);

/**
 * The steps a sandbox clock at `from` takes to reach `to`: one advance reaches at most
 * `MAX_ADVANCE_DAYS` ahead (a day less, for the clock's own drift), so a far date takes a few.
 */
export function advanceSteps(from: Date, to: Date): string[] {
  const step = (MAX_ADVANCE_DAYS - 1) * 24 * 3600 * 1000;
  const steps: string[] = [];
  for (let at = from.getTime() + step; at < to.getTime(); at += step) steps.push(new Date(at).toISOString());
  steps.push(to.toISOString());
  return steps;
}
