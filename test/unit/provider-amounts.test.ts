import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { adyenAmount, fromAdyenAmount } from "../../shared/gateways/adyen/wire.ts";
import { fromStripeAmount, stripeAmount } from "../../shared/gateways/stripe/wire.ts";
import { compareAmounts, currencyDigits } from "../../shared/money.ts";

/**
 * Issue 19: amounts reach each provider in its own minor units. ISO 4217 says how many decimals an
 * amount may have; Stripe and Adyen each count some currencies their own way. Checked on random
 * amounts: what is sent is exactly the amount, or nothing is sent.
 */
const CURRENCIES = [
  "EUR",
  "USD",
  "GBP",
  "JPY",
  "KRW",
  "KWD",
  "BHD",
  "TND",
  "ISK",
  "MGA",
  "CLP",
  "CVE",
  "UGX",
  "IDR",
];

/** A random amount of `currency`, with at most its ISO decimals, as the API takes it. */
const amountOf = (currency: string) => {
  const digits = currencyDigits(currency) ?? 2;
  return fc
    .tuple(fc.integer({ min: 0, max: 999_999_999 }), fc.integer({ min: 0, max: 10 ** digits - 1 }))
    .map(([units, fraction]) =>
      digits === 0 ? String(units) : `${units}.${String(fraction).padStart(digits, "0")}`,
    );
};

const pairs = fc
  .constantFrom(...CURRENCIES)
  .chain((currency) => fc.tuple(fc.constant(currency), amountOf(currency)));

describe("provider minor units", () => {
  it("send Stripe exactly the amount, or nothing when Stripe cannot take it", () => {
    fc.assert(
      fc.property(pairs, ([currency, amount]) => {
        const minor = stripeAmount(amount, currency);
        if (minor === undefined) {
          // Only what Stripe documents it refuses: a fraction of a zero-decimal currency (MGA), or a
          // three-decimal amount whose last digit is not 0.
          const [, fraction = ""] = amount.split(".");
          expect(
            (currency === "MGA" && /[1-9]/.test(fraction)) ||
              (["KWD", "BHD", "TND"].includes(currency) && !fraction.endsWith("0")),
          ).toBe(true);
          return;
        }
        expect(Number.isSafeInteger(minor)).toBe(true);
        expect(compareAmounts(fromStripeAmount(minor, currency), amount)).toBe(0);
      }),
      { numRuns: 2000 },
    );
    expect(stripeAmount("12.34", "EUR")).toBe(1234);
    expect(stripeAmount("1000", "JPY")).toBe(1000);
    expect(stripeAmount("1000", "ISK")).toBe(100_000);
    expect(stripeAmount("1.230", "KWD")).toBe(1230);
    expect(stripeAmount("1.235", "KWD")).toBeUndefined();
    expect(stripeAmount("10.50", "MGA")).toBeUndefined();
  });

  it("send Adyen exactly the amount, or nothing when Adyen cannot take it", () => {
    fc.assert(
      fc.property(pairs, ([currency, amount]) => {
        const sent = adyenAmount(amount, currency);
        if (sent === undefined) {
          // Adyen takes CVE without decimals (ISO gives it 2).
          expect(currency === "CVE" && /[1-9]/.test(amount.split(".")[1] ?? "")).toBe(true);
          return;
        }
        expect(sent.currency).toBe(currency);
        expect(compareAmounts(fromAdyenAmount(sent), amount)).toBe(0);
      }),
      { numRuns: 2000 },
    );
    expect(adyenAmount("1000", "CLP")).toEqual({ value: 100_000, currency: "CLP" });
    expect(adyenAmount("1000", "ISK")).toEqual({ value: 100_000, currency: "ISK" });
    expect(adyenAmount("10", "CVE")).toEqual({ value: 10, currency: "CVE" });
    expect(adyenAmount("10.50", "CVE")).toBeUndefined();
    expect(adyenAmount("1.234", "KWD")).toEqual({ value: 1234, currency: "KWD" });
  });
});
