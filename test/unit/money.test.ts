import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addAmounts,
  amount,
  amountProblem,
  amountProblemIn,
  compareAmounts,
  decimalPlaces,
  fromMinorUnits,
  isAmount,
  isZeroAmount,
  MAX_AMOUNT_INTEGER_DIGITS,
  optionalAmount,
  subtractAmounts,
  toMinorUnits,
} from "../../shared/money.ts";

describe("amount syntax", () => {
  it("accepts plain non-negative decimals in major units", () => {
    for (const text of ["0", "0.00", "10", "10.5", "10.50", "999999999999.9999", "0.0001"]) {
      expect(amountProblem(text), text).toBeUndefined();
    }
  });

  it("refuses signs, exponents, whitespace, grouping, leading zeros and lone points", () => {
    for (const text of [
      "-1",
      "+1",
      "1e3",
      "1E3",
      " 1",
      "1 ",
      "1,5",
      "1,000",
      "01",
      "00.5",
      ".5",
      "5.",
      "",
      "abc",
    ]) {
      expect(amountProblem(text), text).toBeDefined();
    }
  });

  it("says a negative amount is negative", () => {
    expect(amountProblem("-10.50")).toBe("must not be negative");
  });

  it(`stays below 10^${MAX_AMOUNT_INTEGER_DIGITS} major units`, () => {
    expect(amountProblem("9".repeat(MAX_AMOUNT_INTEGER_DIGITS))).toBeUndefined();
    expect(amountProblem(`1${"0".repeat(MAX_AMOUNT_INTEGER_DIGITS)}`)).toMatch(/below/);
  });

  it("counts decimals as written", () => {
    expect(decimalPlaces("10")).toBe(0);
    expect(decimalPlaces("10.50")).toBe(2);
    expect(decimalPlaces("0.125")).toBe(3);
  });
});

describe("amounts of a currency", () => {
  it("allows as many decimals as the currency's ISO 4217 minor unit", () => {
    expect(isAmount("1000", "JPY")).toBe(true);
    expect(isAmount("1000.5", "JPY")).toBe(false);
    expect(isAmount("10.50", "USD")).toBe(true);
    expect(isAmount("10.505", "USD")).toBe(false);
    expect(isAmount("10.500", "USD")).toBe(false);
    expect(isAmount("1.125", "KWD")).toBe(true);
    expect(isAmount("1.1255", "KWD")).toBe(false);
    expect(isAmount("10.50", "usd")).toBe(true);
  });

  it("explains the problem with the currency's rule", () => {
    expect(amountProblemIn("10.5", "JPY")).toBe("must be a whole number: JPY has no decimals");
    expect(amountProblemIn("10.505", "EUR")).toBe("must have at most 2 decimals for EUR");
  });
});

describe("money arithmetic", () => {
  it("adds and subtracts exactly, where floats would not", () => {
    expect(addAmounts("0.1", "0.2")).toBe("0.3");
    expect(addAmounts("999999999999.99", "0.01")).toBe("1000000000000");
    expect(addAmounts()).toBe("0");
    expect(subtractAmounts("10.00", "2.5")).toBe("7.5");
    expect(subtractAmounts("1", "1.01")).toBe("-0.01");
  });

  it("compares by value, whatever the written decimals", () => {
    expect(compareAmounts("10.5", "10.50")).toBe(0);
    expect(compareAmounts("9.99", "10")).toBe(-1);
    expect(compareAmounts("10.01", "10")).toBe(1);
    expect(isZeroAmount("0.00")).toBe(true);
    expect(isZeroAmount("0.01")).toBe(false);
  });

  it("refuses to compute with something that is not an amount", () => {
    expect(() => addAmounts("1e3")).toThrow(RangeError);
    expect(() => compareAmounts("-1", "1")).toThrow(RangeError);
  });

  it("converts to and from minor units with the currency's decimals", () => {
    expect(toMinorUnits("10.50", "USD")).toBe(1050n);
    expect(toMinorUnits("10.5", "USD")).toBe(1050n);
    expect(toMinorUnits("1000", "JPY")).toBe(1000n);
    expect(toMinorUnits("1.125", "KWD")).toBe(1125n);
    expect(fromMinorUnits(1050n, "USD")).toBe("10.50");
    expect(fromMinorUnits(7n, "KWD")).toBe("0.007");
    expect(() => toMinorUnits("10.505", "USD")).toThrow(RangeError);
  });

  it("keeps every sum exact: adding in cents gives the same result", () => {
    const cents = fc.bigInt({ min: 0n, max: 10n ** 13n });
    fc.assert(
      fc.property(fc.array(cents, { maxLength: 20 }), (values) => {
        const amounts = values.map((value) => fromMinorUnits(value, "USD"));
        const sum = values.reduce((total, value) => total + value, 0n);
        expect(compareAmounts(addAmounts(...amounts), fromMinorUnits(sum, "USD"))).toBe(0);
      }),
    );
  });
});

describe("amount fields", () => {
  it("keep the amount exactly as sent", () => {
    expect(amount.parse("10.50")).toBe("10.50");
    expect(amount.parse("0")).toBe("0");
  });

  it("read amounts from text only: JSON numbers reach them as the text they were sent as", () => {
    expect(amount.safeParse(10.5).success).toBe(false);
    expect(amount.safeParse("1e2").success).toBe(false);
    expect(amount.safeParse("-0").success).toBe(false);
  });

  it("say a required amount is required", () => {
    const result = amount.safeParse(undefined);
    expect(result.error?.issues[0]?.message).toBe("is required");
  });

  it("read an empty optional amount as unset", () => {
    expect(optionalAmount.parse("")).toBeNull();
    expect(optionalAmount.parse(undefined)).toBeUndefined();
    expect(optionalAmount.safeParse("-1").success).toBe(false);
  });
});
