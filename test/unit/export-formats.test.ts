import { describe, expect, it } from "vitest";
import { TIME_FORMAT_NAMES, TIME_FORMATS } from "../../shared/exports/catalogue.ts";
import { formatAmount, formatTime } from "../../shared/exports/csv.ts";

describe("export formats", () => {
  it("write every offered time format as its sample shows it, in UTC", () => {
    for (const name of TIME_FORMAT_NAMES) {
      expect(formatTime("2026-03-04T05:06:07.089Z", name), name).toBe(TIME_FORMATS[name]);
    }
    expect(formatTime("2026-12-31T23:59:59.999Z", "day_month_year")).toBe("31/12/2026 23:59:59");
  });

  it("write amounts with the chosen decimals, rounded half up, and the chosen separator", () => {
    expect(formatAmount("12.35", 1, ".")).toBe("12.4");
    expect(formatAmount("12.34", 1, ",")).toBe("12,3");
    expect(formatAmount("-4.005", 2, ".")).toBe("-4.01");
    expect(formatAmount("7", 2, ",")).toBe("7,00");
    expect(formatAmount("1234.567", 0, ".")).toBe("1235");
    expect(formatAmount("0.125", null, ",")).toBe("0,125");
  });
});
