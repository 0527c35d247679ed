import { ApiError, invalidField, validationFailed } from "../http/errors.ts";
import type { Input } from "../http/input.ts";
import { choice, integerField, metadata, text } from "../validation/fields.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";
import {
  CARD_SCHEMES,
  type CardScheme,
  cardNumberProblem,
  cvcLengths,
  detectScheme,
  normalizeCardNumber,
} from "./card-number.ts";

/**
 * What `POST /cards` takes: `number`, `exp_month`, `exp_year` (two-digit years are 20xx), `cvc2`
 * (mobile libraries send `cvc`), `name`, `metadata`. A bad number is a 400 `card.invalid-number`;
 * any other bad field a 400 `request.validation.*` naming it. Errors never echo a value.
 */
export interface CardInput {
  /** Digits only. */
  number: string;
  scheme: CardScheme | null;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  cvc: string | null;
  name: string | null;
  /** The scheme the cardholder prefers among the card's (`preferred_scheme`). */
  preferredScheme: CardScheme | null;
  metadata: Record<string, string>;
}

const securityCode = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z.optional(z.string("must be a string of digits").check(z.regex(/^\d{3,4}$/, "must be 3 or 4 digits"))),
);

export const cardFields = z.object({
  exp_month: integerField.check(
    z.refine((month) => month >= 1 && month <= 12, "must be a month from 1 to 12"),
  ),
  exp_year: integerField.check(
    z.refine((year) => (year >= 0 && year <= 99) || (year >= 2000 && year <= 2099), {
      message: "must be a year: two digits (20xx) or four (2000 to 2099)",
    }),
  ),
  cvc2: securityCode,
  cvc: securityCode,
  name: text(255),
  preferred_scheme: choice(CARD_SCHEMES),
  metadata,
});

export function parseCardInput(input: Input, now: Date): CardInput {
  const number = readCardNumber(input.number);
  const scheme = detectScheme(number);
  const fields = parseInput(cardFields, input);
  const expYear = fields.exp_year < 100 ? 2000 + fields.exp_year : fields.exp_year;
  checkExpiry(fields.exp_month, expYear, now);

  const cvc = fields.cvc2 ?? fields.cvc ?? null;
  checkCvc(fields.cvc2 !== undefined ? "cvc2" : "cvc", cvc, scheme);
  const preferredScheme = fields.preferred_scheme ?? null;
  checkPreferredScheme(preferredScheme, scheme);
  return {
    number,
    scheme,
    expMonth: fields.exp_month,
    expYear,
    cvc,
    name: fields.name ?? null,
    preferredScheme,
    metadata: fields.metadata ?? {},
  };
}

function checkCvc(name: string, cvc: string | null, scheme: CardScheme | null): void {
  const lengths = cvcLengths(scheme);
  if (cvc !== null && !lengths.includes(cvc.length)) {
    throw invalidField(
      name,
      scheme === null
        ? "must be 3 or 4 digits"
        : `must be ${lengths.join(" or ")} digits for a ${scheme} card`,
    );
  }
}

/** A preferred scheme must be one of the card's (its scheme; no co-scheme is known without a BIN table). */
function checkPreferredScheme(preferred: CardScheme | null, scheme: CardScheme | null): void {
  if (preferred !== null && preferred !== scheme) {
    throw invalidField(
      "preferred_scheme",
      `must be one of the card's schemes (${scheme ?? "none is known"})`,
    );
  }
}

/** What `PUT /cards/{id}` takes: a new `cvc` (mobile libraries) or `cvc2`, and `preferred_scheme`. */
export const cardChangeFields = z.object({
  cvc: securityCode,
  cvc2: securityCode,
  preferred_scheme: choice(CARD_SCHEMES),
});

export interface CardChangeInput {
  cvc?: string;
  preferredScheme?: CardScheme | null;
}

/** A card change, checked against the card (its scheme decides the CVC's length). */
export function parseCardChange(input: Input, card: { scheme: CardScheme | null }): CardChangeInput {
  const fields = parseInput(cardChangeFields, input);
  const cvc = fields.cvc2 ?? fields.cvc;
  if (cvc !== undefined) checkCvc(fields.cvc2 !== undefined ? "cvc2" : "cvc", cvc, card.scheme);
  if (fields.preferred_scheme !== undefined) checkPreferredScheme(fields.preferred_scheme, card.scheme);
  return {
    ...(cvc !== undefined ? { cvc } : {}),
    ...(fields.preferred_scheme !== undefined ? { preferredScheme: fields.preferred_scheme } : {}),
  };
}

function readCardNumber(value: unknown): string {
  if (value === undefined || value === "") {
    throw validationFailed("missing-number", [{ name: "number", message: "is required" }]);
  }
  const problem =
    typeof value === "string" ? cardNumberProblem(normalizeCardNumber(value)) : "must be a string of digits";
  if (problem) {
    throw new ApiError(400, "card.invalid-number", `The card number ${problem}.`, [
      { name: "number", message: problem },
    ]);
  }
  return normalizeCardNumber(value as string);
}

/**
 * A card is valid through the last day of its expiry month, in the cardholder's time zone: it counts
 * as expired only once that month is over everywhere (UTC-12), so no valid card is ever refused.
 */
export function checkExpiry(month: number, year: number, now: Date): void {
  const latest = new Date(now.getTime() - 12 * 60 * 60 * 1000);
  const currentYear = latest.getUTCFullYear();
  const currentMonth = latest.getUTCMonth() + 1;
  if (year < currentYear) throw invalidField("exp_year", "the card has expired");
  if (year === currentYear && month < currentMonth) throw invalidField("exp_month", "the card has expired");
}
