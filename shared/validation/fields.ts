import currencyCodes from "currency-codes";
import countries from "i18n-iso-countries";
import { z } from "zod";

/**
 * Field types shared by every resource. Form bodies carry only strings, JSON bodies carry native
 * types, so booleans and integers accept both. An empty string means "no value": it leaves a field
 * unset on create and clears it on update (`null` from JSON clients means "not given").
 */
const blankIsNull = (value: unknown) => (value === "" ? null : value);

/** Optional text, at most `max` characters; `""` → null. */
export const text = (max: number) =>
  z.preprocess(blankIsNull, z.string().max(max, `must be at most ${max} characters`).nullable().optional());

export const requiredText = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
    .min(1, "is required")
    .max(max, `must be at most ${max} characters`);

export const email = z.preprocess(
  blankIsNull,
  z.email("must be a valid email address").max(254, "must be at most 254 characters").nullable().optional(),
);

export const booleanField = z.preprocess(
  (value) => (value === "true" || value === "1" ? true : value === "false" || value === "0" ? false : value),
  z.boolean("must be true or false").optional(),
);

export const integerField = z.preprocess(
  (value) => (typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value),
  z.number("must be an integer").int("must be an integer"),
);

/**
 * The ISO 4217 minor unit (decimals) of a currency that money can be paid in. Precious metals,
 * testing and fund codes (listed with `Zz…` pseudo-countries) are not payable currencies.
 */
export function currencyDigits(code: string): number | undefined {
  const record = currencyCodes.code(code.toUpperCase());
  if (!record || record.countries.every((country) => country.startsWith("Zz"))) return undefined;
  return Number.isInteger(record.digits) ? record.digits : undefined;
}

export const currency = z
  .string("must be an ISO 4217 currency code")
  .transform((value) => value.toUpperCase())
  .refine((value) => /^[A-Z]{3}$/.test(value) && currencyDigits(value) !== undefined, {
    message: "must be a valid ISO 4217 currency code",
  });

export const countryCode = z.preprocess(
  blankIsNull,
  z
    .string()
    .transform((value) => value.toUpperCase())
    .refine((value) => /^[A-Z]{2}$/.test(value) && countries.isValid(value), {
      message: "must be a valid ISO 3166-1 alpha-2 country code",
    })
    .nullable()
    .optional(),
);

/** A phone number of at most 17 characters once a leading `+` is written `00` (E.164 fits exactly). */
export const phoneNumber = z.preprocess(
  blankIsNull,
  z
    .string()
    .transform((value) => value.trim().replace(/^\+/, "00"))
    .refine((value) => /^[0-9][0-9 ().-]*$/.test(value), { message: "must be a phone number" })
    .refine((value) => value.length <= 17, { message: "must be at most 17 characters" })
    .nullable()
    .optional(),
);

/** A calendar date, `YYYY-MM-DD`. */
export const calendarDate = z.preprocess(
  blankIsNull,
  z.iso.date("must be a date YYYY-MM-DD").nullable().optional(),
);

/** A date and time in ISO 8601 or RFC 1123, returned as ISO 8601 UTC with milliseconds. */
export const timestamp = z.preprocess(
  blankIsNull,
  z
    .string()
    .refine((value) => parseTimestamp(value) !== undefined, {
      message: "must be a date and time in ISO 8601 or RFC 1123 format",
    })
    .transform((value) => (parseTimestamp(value) as Date).toISOString())
    .nullable()
    .optional(),
);

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const RFC_1123 = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} (GMT|UTC|[+-]\d{4})$/;

export function parseTimestamp(value: string): Date | undefined {
  if (!ISO_8601.test(value) && !RFC_1123.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export const METADATA_LIMITS = { pairs: 50, keyLength: 40, valueLength: 500 } as const;

/** Merchant key/value pairs: at most 50, keys of 1 to 40 characters, values of at most 500. */
export const metadata = z
  .record(z.string(), z.string("must be a string"), "must be a dictionary of strings")
  .superRefine((pairs, ctx) => {
    const entries = Object.entries(pairs);
    if (entries.length > METADATA_LIMITS.pairs) {
      ctx.addIssue({ code: "custom", message: `must hold at most ${METADATA_LIMITS.pairs} pairs` });
    }
    for (const [key, value] of entries) {
      if (key.length === 0 || key.length > METADATA_LIMITS.keyLength) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `keys are 1 to ${METADATA_LIMITS.keyLength} characters`,
        });
      } else if (value.length > METADATA_LIMITS.valueLength) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `values are at most ${METADATA_LIMITS.valueLength} characters`,
        });
      }
    }
  })
  .optional();
