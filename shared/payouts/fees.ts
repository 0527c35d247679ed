import { currencyDigits, fromMinorUnits } from "../money.ts";
import type { LineType, SettlementLine } from "./settlement.ts";

/**
 * The sandbox gateway's fees, as an acquirer's statement breaks them down: plausible figures, so a
 * merchant's reconciliation meets fees that are not round. A sale pays interchange (0.20 % on debit
 * and prepaid cards, 0.30 % on consumer credit and unknown cards: the EU's caps), the scheme's fee
 * (0.04 %), the acquirer's markup (0.10 %) and the gateway's fixed fee per transaction (0.10 in a
 * currency with 2 decimals); a native APM payment no interchange nor scheme fee but its provider's
 * 0.90 % (`other_fee`); a refund the fixed fee; a chargeback a 15.00 handling fee. Each part is
 * rounded half up to the currency's minor unit on its own, and `fees` is their exact sum.
 */
export interface FeeBreakdown {
  scheme_fee: string;
  interchange_fee: string;
  gateway_fee: string;
  markup_fee: string;
  acquirer_fee: string;
  other_fee: string;
}

const PARTS = [
  "scheme_fee",
  "interchange_fee",
  "gateway_fee",
  "markup_fee",
  "acquirer_fee",
  "other_fee",
] as const;

/** Rates in parts per million of the amount. */
export const SANDBOX_RATES_PPM = {
  interchangeDebit: 2_000n,
  interchangeCredit: 3_000n,
  scheme: 400n,
  markup: 1_000n,
  nativeApm: 9_000n,
} as const;

/** A share of `minor` in parts per million, rounded half up (amounts here are never negative). */
function share(minor: bigint, ppm: bigint): bigint {
  return (minor * ppm * 2n + 1_000_000n) / 2_000_000n;
}

function digitsOf(currency: string): number {
  const digits = currencyDigits(currency);
  if (digits === undefined) throw new RangeError(`${currency} is not a valid currency`);
  return digits;
}

/** The fixed fee per transaction: 0.10 of a currency with decimals, 10 of one without (JPY). */
function fixedFee(currency: string): bigint {
  const digits = digitsOf(currency);
  return digits === 0 ? 10n : 10n ** BigInt(digits) / 10n;
}

/** The chargeback handling fee: 15 major units (1,500 of a currency without decimals). */
function chargebackFee(currency: string): bigint {
  const digits = digitsOf(currency);
  return digits === 0 ? 1_500n : 15n * 10n ** BigInt(digits);
}

function interchangeRate(cardType: string | null): bigint {
  return cardType === "debit" || cardType === "prepaid"
    ? SANDBOX_RATES_PPM.interchangeDebit
    : SANDBOX_RATES_PPM.interchangeCredit;
}

/** The fee parts of one line in minor units. */
function partsOf(
  type: LineType,
  line: Pick<SettlementLine, "currency" | "card_type" | "payment_method">,
  minor: bigint,
): Record<(typeof PARTS)[number], bigint> {
  const none = {
    scheme_fee: 0n,
    interchange_fee: 0n,
    gateway_fee: 0n,
    markup_fee: 0n,
    acquirer_fee: 0n,
    other_fee: 0n,
  };
  if (type === "refund") return { ...none, gateway_fee: fixedFee(line.currency) };
  if (type === "chargeback") return { ...none, other_fee: chargebackFee(line.currency) };
  if (line.payment_method === "native-apm") {
    return {
      ...none,
      gateway_fee: fixedFee(line.currency),
      markup_fee: share(minor, SANDBOX_RATES_PPM.markup),
      other_fee: share(minor, SANDBOX_RATES_PPM.nativeApm),
    };
  }
  return {
    ...none,
    interchange_fee: share(minor, interchangeRate(line.card_type)),
    scheme_fee: share(minor, SANDBOX_RATES_PPM.scheme),
    markup_fee: share(minor, SANDBOX_RATES_PPM.markup),
    gateway_fee: fixedFee(line.currency),
  };
}

/** A line's fees: the breakdown and their sum, in minor units and as written. */
export function feesOf(
  line: Pick<SettlementLine, "movement" | "currency" | "card_type" | "payment_method">,
  amountMinor: bigint,
): { breakdown: FeeBreakdown; total: string; totalMinor: bigint } {
  const parts = partsOf(line.movement, line, amountMinor);
  const totalMinor = PARTS.reduce((sum, part) => sum + parts[part], 0n);
  const breakdown = Object.fromEntries(
    PARTS.map((part) => [part, fromMinorUnits(parts[part], line.currency)]),
  ) as unknown as FeeBreakdown;
  return { breakdown, total: fromMinorUnits(totalMinor, line.currency), totalMinor };
}

/** A breakdown whose parts are all zero (a provider's item that reports no fees). */
export function noFees(currency: string): FeeBreakdown {
  const zero = fromMinorUnits(0n, currency);
  return Object.fromEntries(PARTS.map((part) => [part, zero])) as unknown as FeeBreakdown;
}

export const FEE_PARTS = PARTS;
