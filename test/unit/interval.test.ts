import { describe, expect, it } from "vitest";
import { daysBefore, intervalProblem, intervalsAfter, parseInterval } from "../../shared/plans/interval.ts";

const at = (iso: string) => new Date(iso);
const iso = (date: Date) => date.toISOString();

describe("intervals", () => {
  it("read counts and units, in any order, each unit once", () => {
    expect(parseInterval("1m")).toEqual({ years: 0, months: 1, weeks: 0, days: 0 });
    expect(parseInterval("1d2w3m4y")).toEqual({ years: 4, months: 3, weeks: 2, days: 1 });
    expect(parseInterval("1y6m")).toEqual({ years: 1, months: 6, weeks: 0, days: 0 });
  });

  it.each(["", "m", "1", "1x", "-1m", "1.5m", "1m1m", "0d", "0m0d", "1M", " 1m", "1m ", "10000d", "1000d"])(
    "refuse %j",
    (text) => {
      expect(intervalProblem(text)).toEqual(expect.any(String));
    },
  );
});

describe("calendar arithmetic from an anchor", () => {
  it("keeps a month-end anchor: Jan 31 → Feb 28 → Mar 31 → Apr 30", () => {
    const anchor = at("2026-01-31T10:00:00.000Z");
    const monthly = parseInterval("1m");
    expect([1, 2, 3].map((n) => iso(intervalsAfter(anchor, monthly, n)))).toEqual([
      "2026-02-28T10:00:00.000Z",
      "2026-03-31T10:00:00.000Z",
      "2026-04-30T10:00:00.000Z",
    ]);
  });

  it("lands on Feb 29 in a leap year, and comes back to the anchor's day after", () => {
    const anchor = at("2028-01-30T00:00:00.000Z");
    const monthly = parseInterval("1m");
    expect(iso(intervalsAfter(anchor, monthly, 1))).toBe("2028-02-29T00:00:00.000Z");
    expect(iso(intervalsAfter(anchor, monthly, 2))).toBe("2028-03-30T00:00:00.000Z");
  });

  it("brings a Feb 29 yearly anchor to Feb 28 in common years and back to Feb 29 in leap years", () => {
    const anchor = at("2028-02-29T12:00:00.000Z");
    const yearly = parseInterval("1y");
    expect(iso(intervalsAfter(anchor, yearly, 1))).toBe("2029-02-28T12:00:00.000Z");
    expect(iso(intervalsAfter(anchor, yearly, 4))).toBe("2032-02-29T12:00:00.000Z");
  });

  it("adds weeks and days exactly, and combines units (months first, then days)", () => {
    const anchor = at("2026-03-01T08:30:00.000Z");
    expect(iso(intervalsAfter(anchor, parseInterval("2w"), 1))).toBe("2026-03-15T08:30:00.000Z");
    expect(iso(intervalsAfter(anchor, parseInterval("1m15d"), 1))).toBe("2026-04-16T08:30:00.000Z");
    expect(iso(intervalsAfter(anchor, parseInterval("1d"), 365))).toBe("2027-03-01T08:30:00.000Z");
  });

  it("works in UTC whatever the machine's time zone (no daylight-saving hour lost or gained)", () => {
    // 2026-03-29 is the EU daylight-saving change: a local-time computation would shift the hour.
    const anchor = at("2026-03-28T23:30:00.000Z");
    expect(iso(intervalsAfter(anchor, parseInterval("1d"), 1))).toBe("2026-03-29T23:30:00.000Z");
    expect(iso(daysBefore(at("2026-03-31T23:30:00.000Z"), 3))).toBe("2026-03-28T23:30:00.000Z");
  });
});
