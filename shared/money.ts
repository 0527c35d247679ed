import Big from "big.js";
import { CURRENCY_DIGITS_TABLE } from "./validation/code-tables.ts";
import * as z from "./validation/zod.ts";

/**
 * Money. An amount is a decimal string in the major unit of its currency ("10.50" dollars, not
 * cents), written plainly: digits, an optional fraction, no sign, exponent, grouping or whitespace,
 * no leading zeros ("0.50", not "00.50" or ".50"). It is stored and returned exactly as the merchant
 * wrote it ("10.50" stays "10.50"); arithmetic on amounts is exact decimal arithmetic, never floats.
 *
 * An amount has at most as many decimals as its currency's ISO 4217 minor unit (JPY 0, USD 2,
 * KWD 3): "10.50" is a USD amount, not a JPY one. Decimals are counted as written, so "10.500" is
 * not a USD amount although it equals one.
 */

/**
 * Amounts are below 10^12 major units (at most 12 integer digits): far above any real payment, even
 * in currencies of large nominal value (10^12 IDR is about 60 million USD), and small enough that
 * sums of millions of amounts stay exact at the precision below.
 */
export const MAX_AMOUNT_INTEGER_DIGITS = 12;
/** The largest ISO 4217 minor unit (CLF, UYW): no amount of any currency has more decimals. */
export const MAX_AMOUNT_DECIMALS = 4;

const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * Exact decimal arithmetic: big.js adds, subtracts and multiplies without rounding. Its one division
 * (`fromMinorUnits`, by a power of ten) is exact too, far within its 20 decimal places. Strict: a
 * number (a float) is refused, only text makes a value.
 */
const Exact = Big();
Exact.strict = true;
type Exact = Big;

/** ISO 4217 from the currency-codes package, reduced to what money needs (`scripts/code-tables.mjs`). */
const CURRENCY_DIGITS = new Map(
  CURRENCY_DIGITS_TABLE.split(" ").map((entry) => [entry.slice(0, 3), Number(entry.slice(4))] as const),
);

/**
 * The ISO 4217 minor unit (decimals) of a currency that money can be paid in. Precious metals,
 * testing and fund codes (listed with `Zz…` pseudo-countries) are not payable currencies.
 */
export function currencyDigits(code: string): number | undefined {
  return CURRENCY_DIGITS.get(code.toUpperCase());
}

/** Why `text` is not an amount (of any currency), or undefined when it is one. */
export function amountProblem(text: string): string | undefined {
  if (text.startsWith("-") && PLAIN_DECIMAL.test(text.slice(1))) return "must not be negative";
  if (!PLAIN_DECIMAL.test(text)) {
    return 'must be a decimal number in the major unit of the currency, such as "10.50"';
  }
  const [integer = "", fraction = ""] = text.split(".");
  if (integer.length > MAX_AMOUNT_INTEGER_DIGITS) {
    return `must be below 10^${MAX_AMOUNT_INTEGER_DIGITS} (at most ${MAX_AMOUNT_INTEGER_DIGITS} integer digits)`;
  }
  if (fraction.length > MAX_AMOUNT_DECIMALS) return `must have at most ${MAX_AMOUNT_DECIMALS} decimals`;
  return undefined;
}

/** The decimals of an amount as written: "10.50" has 2, "10" has 0. */
export function decimalPlaces(text: string): number {
  return text.split(".")[1]?.length ?? 0;
}

/** Why `text` is not an amount of `currency` (a valid ISO 4217 code), or undefined when it is one. */
export function amountProblemIn(text: string, currency: string): string | undefined {
  const problem = amountProblem(text);
  if (problem) return problem;
  const digits = currencyDigits(currency);
  if (digits === undefined) return `cannot be checked: ${currency} is not a valid currency`;
  if (decimalPlaces(text) > digits) {
    return digits === 0
      ? `must be a whole number: ${currency.toUpperCase()} has no decimals`
      : `must have at most ${digits} decimals for ${currency.toUpperCase()}`;
  }
  return undefined;
}

export function isAmount(text: string, currency?: string): boolean {
  return (currency === undefined ? amountProblem(text) : amountProblemIn(text, currency)) === undefined;
}

function exact(text: string): Exact {
  const problem = amountProblem(text);
  if (problem) throw new RangeError(`"${text}" is not an amount: it ${problem}`);
  return new Exact(text);
}

/** Plain notation of a computed value; a negative result (a difference) keeps its sign. */
function written(value: Exact): string {
  return value.toFixed();
}

/** The exact sum of amounts ("0" for none). */
export function addAmounts(...amounts: string[]): string {
  return written(amounts.reduce<Exact>((sum, amount) => sum.plus(exact(amount)), new Exact("0")));
}

/** `a - b`, exactly; negative when `b` is larger (callers decide whether that is allowed). */
export function subtractAmounts(a: string, b: string): string {
  return written(exact(a).minus(exact(b)));
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`, by value ("10.5" equals "10.50"). */
export function compareAmounts(a: string, b: string): -1 | 0 | 1 {
  return exact(a).cmp(exact(b)) as -1 | 0 | 1;
}

export function isZeroAmount(amount: string): boolean {
  return exact(amount).eq("0");
}

/** An amount of `currency` in its minor unit ("10.50" USD → 1050n), for providers that want integers. */
export function toMinorUnits(amount: string, currency: string): bigint {
  const problem = amountProblemIn(amount, currency);
  if (problem) throw new RangeError(`"${amount}" is not a ${currency} amount: it ${problem}`);
  const digits = currencyDigits(currency) ?? 0;
  return BigInt(exact(amount).times(new Exact("10").pow(digits)).toFixed(0));
}

/** The inverse of `toMinorUnits`, written with the currency's decimals (1050n USD → "10.50"). */
export function fromMinorUnits(minor: bigint, currency: string): string {
  const digits = currencyDigits(currency);
  if (digits === undefined) throw new RangeError(`${currency} is not a valid currency`);
  return new Exact(minor.toString()).div(new Exact("10").pow(digits)).toFixed(digits);
}

/** Nothing, written with the currency's decimals ("0.00" USD, "0" JPY). */
export function zeroIn(currency: string): string {
  return fromMinorUnits(0n, currency);
}

/**
 * An amount in a provider's minor unit where the provider counts a currency's decimals its own way
 * (`exponent`: Stripe takes ISK with 2 and MGA with 0, Adyen CLP with 2 and CVE with 0, where ISO
 * 4217 says otherwise). Undefined when the amount has more decimals than the provider takes.
 */
export function toProviderMinorUnits(amount: string, exponent: number): bigint | undefined {
  const scaled = exact(amount).times(new Exact("10").pow(exponent));
  if (!scaled.eq(scaled.round(0, Big.roundDown))) return undefined;
  return BigInt(scaled.toFixed(0));
}

/** The inverse of `toProviderMinorUnits`, written with the currency's ISO decimals. */
export function fromProviderMinorUnits(minor: bigint, currency: string, exponent: number): string {
  const digits = currencyDigits(currency);
  if (digits === undefined) throw new RangeError(`${currency} is not a valid currency`);
  return new Exact(minor.toString()).div(new Exact("10").pow(exponent)).toFixed(digits);
}

/**
 * A required amount field. Bodies carry amounts as text: form values are text, and JSON numbers
 * arrive as the text they were sent as (`shared/http/input.ts`), so `1.10` keeps its decimals and
 * `1e2` is refused like the string "1e2". Whether the decimals fit the currency is checked where
 * the currency is known (`amountProblemIn`), since the currency is another field.
 */
export const amount = z
  .string({
    error: (issue) =>
      issue.input === undefined ? "is required" : 'must be a decimal string in major units, such as "10.50"',
  })
  .check(
    z.superRefine((value, ctx) => {
      const problem = amountProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  );

/** An optional amount field; `""` → null. */
export const optionalAmount = z.preprocess(
  (value) => (value === "" ? null : value),
  z.optional(z.nullable(amount)),
);

/**
 * What is to be paid (an invoice's amount): an amount above zero. A payment of nothing is refused
 * where it is asked for, with the field named; checking that a card can pay is a customer token's
 * verification (`verify=true`), not a zero-amount invoice.
 */
export const paymentAmount = amount.check(
  z.refine(
    // Zod runs this after the amount's own (non-aborting) issues too: only a valid amount is checked.
    (value) => amountProblem(value) !== undefined || !isZeroAmount(value),
    "must be above zero",
  ),
);
