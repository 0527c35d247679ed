/**
 * Card numbers (PANs): normalization, the Luhn check, scheme detection from IIN ranges, and what of
 * a number may be shown. Pure functions. No message here ever contains a number or a part of one.
 */
export const CARD_SCHEMES = [
  "visa",
  "mastercard",
  "american-express",
  "discover",
  "diners-club",
  "jcb",
  "unionpay",
] as const;

export type CardScheme = (typeof CARD_SCHEMES)[number];

export const MIN_CARD_NUMBER_LENGTH = 12;
export const MAX_CARD_NUMBER_LENGTH = 19;

/**
 * The first digits shown as `iin`: always 6. PCI DSS allows at most the first 6 and last 4 digits
 * of a PAN to be displayed (first 8 only for 16+ digit PANs with 8-digit BINs); 6 is the one rule
 * that holds for every length and needs no BIN table to decide.
 */
export const IIN_LENGTH = 6;
export const LAST_DIGITS_LENGTH = 4;

/** The number as digits only: clients may send it grouped with spaces or dashes. */
export function normalizeCardNumber(raw: string): string {
  return raw.replace(/[\s-]/g, "");
}

/** Why `digits` (normalized) is not a card number, or undefined when it is one. */
export function cardNumberProblem(digits: string): string | undefined {
  if (!/^\d+$/.test(digits)) return "must contain only digits (spaces and dashes are allowed between them)";
  if (digits.length < MIN_CARD_NUMBER_LENGTH || digits.length > MAX_CARD_NUMBER_LENGTH) {
    return `must be ${MIN_CARD_NUMBER_LENGTH} to ${MAX_CARD_NUMBER_LENGTH} digits long`;
  }
  if (!passesLuhn(digits)) return "is not a valid card number (its check digit is wrong)";
  return undefined;
}

/** The Luhn (mod 10) checksum every payment card number carries in its last digit. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

interface SchemeRule {
  scheme: CardScheme;
  /** Inclusive IIN ranges, compared on as many leading digits as their bounds have. */
  ranges: readonly (readonly [string, string])[];
  lengths: readonly number[];
}

/**
 * IIN ranges of the schemes, most specific first: Discover's 6011 / 644-649 / 65 and the
 * UnionPay-issued 622126-622925 accepted on Discover's network are read before UnionPay's 62.
 */
const SCHEME_RULES: readonly SchemeRule[] = [
  {
    scheme: "american-express",
    ranges: [
      ["34", "34"],
      ["37", "37"],
    ],
    lengths: [15],
  },
  {
    scheme: "diners-club",
    ranges: [
      ["300", "305"],
      ["309", "309"],
      ["36", "36"],
      ["38", "39"],
    ],
    lengths: [14, 15, 16, 17, 18, 19],
  },
  { scheme: "jcb", ranges: [["3528", "3589"]], lengths: [16, 17, 18, 19] },
  { scheme: "visa", ranges: [["4", "4"]], lengths: [13, 16, 19] },
  {
    scheme: "mastercard",
    ranges: [
      ["51", "55"],
      ["2221", "2720"],
    ],
    lengths: [16],
  },
  {
    scheme: "discover",
    ranges: [
      ["6011", "6011"],
      ["644", "649"],
      ["65", "65"],
      ["622126", "622925"],
    ],
    lengths: [16, 17, 18, 19],
  },
  {
    scheme: "unionpay",
    ranges: [
      ["62", "62"],
      ["81", "81"],
    ],
    lengths: [16, 17, 18, 19],
  },
];

/** The scheme whose IIN ranges and lengths the number fits; null when none does (it may still be valid). */
export function detectScheme(digits: string): CardScheme | null {
  return (
    SCHEME_RULES.find((rule) => rule.lengths.includes(digits.length) && inRanges(rule, digits))?.scheme ??
    null
  );
}

/**
 * The scheme of the cards an IIN (the first 6 to 8 digits) starts: by the IIN ranges alone, as the
 * number's length is not known. Null when no range holds it.
 */
export function schemeOfIin(prefix: string): CardScheme | null {
  return SCHEME_RULES.find((rule) => inRanges(rule, prefix))?.scheme ?? null;
}

function inRanges(rule: SchemeRule, digits: string): boolean {
  return rule.ranges.some(([low, high]) => {
    const prefix = digits.slice(0, low.length);
    return prefix >= low && prefix <= high;
  });
}

/** How many digits the scheme's security code has: 4 on American Express cards, 3 on the others. */
export function cvcLengths(scheme: CardScheme | null): readonly number[] {
  if (scheme === "american-express") return [4];
  return scheme === null ? [3, 4] : [3];
}

export function iin(digits: string): string {
  return digits.slice(0, IIN_LENGTH);
}

export function lastDigits(digits: string): string {
  return digits.slice(-LAST_DIGITS_LENGTH);
}
