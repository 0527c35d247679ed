import { isIPv4, isIPv6 } from "node:net";
import { PLAN_ID_PATTERN } from "../ids.ts";
import { currencyDigits } from "../money.ts";
import { COUNTRY_CODES_TABLE } from "./code-tables.ts";
import * as z from "./zod.ts";

/**
 * Field types shared by every resource. Form bodies carry only strings, JSON bodies carry native
 * types, so booleans and integers accept both. An empty string means "no value": it leaves a field
 * unset on create and clears it on update (`null` from JSON clients means "not given").
 */
const blankIsNull = (value: unknown) => (value === "" ? null : value);

/** Optional text, at most `max` characters; `""` → null. */
export const text = (max: number) =>
  z.preprocess(
    blankIsNull,
    z.optional(
      z.nullable(z.string("must be a string").check(z.maxLength(max, `must be at most ${max} characters`))),
    ),
  );

export const requiredText = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
    .check(z.minLength(1, "is required"), z.maxLength(max, `must be at most ${max} characters`));

/** An id the merchant chooses (plans, coupons), required: `PLAN_ID_PATTERN`, but `.` and `..`. */
export const chosenId = z
  .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
  .check(
    z.regex(PLAN_ID_PATTERN, "must be 1 to 100 letters, digits, _, - or ."),
    z.refine((id) => id !== "." && id !== "..", "cannot be . or .., which no URL can address"),
  );

export const email = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z.email("must be a valid email address").check(z.maxLength(254, "must be at most 254 characters")),
    ),
  ),
);

/** One of a fixed list of values; `""` → null. */
export const choice = <const Values extends readonly [string, ...string[]]>(values: Values) =>
  z.preprocess(
    blankIsNull,
    z.optional(z.nullable(z.enum(values, { error: `must be one of ${values.join(", ")}` }))),
  );

export const MAX_URL_LENGTH = 2048;

/**
 * An absolute `http` or `https` URL with a host, at most 2048 characters, kept as sent; `""` → null.
 * The scheme must be written out: `new URL` alone would also accept `https:example.com`.
 */
export const httpUrl = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z
        .string("must be a URL")
        .check(
          z.maxLength(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
          z.refine(isHttpUrl, { message: "must be an absolute http or https URL" }),
        ),
    ),
  ),
);

function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\/[^\s/?#]/i.test(value) || /\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/**
 * An IPv4 address in dotted-quad form or an IPv6 address, kept as sent; `""` → null (Node's own
 * `net.isIPv4`/`isIPv6`). The short IPv4 forms some parsers also take (`1`, `0x7f.1`) and leading
 * zeros (`01.2.3.4`, which some read as octal) are refused: nobody means them.
 */
export const ipAddress = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z.string("must be an IP address").check(
        z.maxLength(100, "must be an IP address"),
        z.refine((value) => isIPv4(value) || isIPv6(value), {
          message: "must be a valid IPv4 or IPv6 address",
        }),
      ),
    ),
  ),
);

export const booleanField = z.preprocess(
  (value) => (value === "true" || value === "1" ? true : value === "false" || value === "0" ? false : value),
  z.optional(z.boolean("must be true or false")),
);

export const integerField = z.preprocess(
  (value) => (typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value),
  z.number("must be an integer").check(z.int("must be an integer")),
);

export const currency = z
  .pipe(
    z.string("must be an ISO 4217 currency code"),
    z.transform((value) => value.toUpperCase()),
  )
  .check(
    z.refine((value) => /^[A-Z]{3}$/.test(value) && currencyDigits(value) !== undefined, {
      message: "must be a valid ISO 4217 currency code",
    }),
  );

/**
 * ISO 3166-1 alpha-2 codes, from i18n-iso-countries' table of codes reduced to them
 * (`scripts/code-tables.mjs`): validating a code needs neither its locales nor its name search.
 */
const ALPHA_2 = new Set(COUNTRY_CODES_TABLE.split(" "));

export const countryCode = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z
        .pipe(
          z.string(),
          z.transform((value) => value.toUpperCase()),
        )
        .check(
          z.refine((value) => ALPHA_2.has(value), {
            message: "must be a valid ISO 3166-1 alpha-2 country code",
          }),
        ),
    ),
  ),
);

/** A phone number of at most 17 characters once a leading `+` is written `00` (E.164 fits exactly). */
export const phoneNumber = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z
        .pipe(
          z.string(),
          z.transform((value) => value.trim().replace(/^\+/, "00")),
        )
        .check(
          z.refine((value) => /^[0-9][0-9 ().-]*$/.test(value), { message: "must be a phone number" }),
          z.refine((value) => value.length <= 17, { message: "must be at most 17 characters" }),
        ),
    ),
  ),
);

/** A calendar date, `YYYY-MM-DD`. */
export const calendarDate = z.preprocess(
  blankIsNull,
  z.optional(z.nullable(z.iso.date("must be a date YYYY-MM-DD"))),
);

/** A date and time in ISO 8601 or RFC 1123, returned as ISO 8601 UTC with milliseconds. */
export const timestamp = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z.pipe(
        z.string().check(
          z.refine((value) => parseTimestamp(value) !== undefined, {
            message: "must be a date and time in ISO 8601 or RFC 1123 format",
          }),
        ),
        z.transform((value) => (parseTimestamp(value) as Date).toISOString()),
      ),
    ),
  ),
);

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const RFC_1123 = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} (GMT|UTC|[+-]\d{4})$/;

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export function parseTimestamp(value: string): Date | undefined {
  const iso = ISO_8601.test(value) ? /^(\d{4})-(\d{2})-(\d{2})/.exec(value) : null;
  const rfc = iso ? null : RFC_1123.test(value) ? /^\w{3}, (\d{2}) (\w{3}) (\d{4})/.exec(value) : null;
  const day = iso
    ? { year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]) }
    : rfc
      ? { year: Number(rfc[3]), month: MONTHS.indexOf(rfc[2] ?? "") + 1, day: Number(rfc[1]) }
      : undefined;
  // `Date` rolls a day past the month's end over into the next month (Feb 30 → Mar 2): refuse it.
  if (!day || !dayExists(day.year, day.month, day.day)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function dayExists(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12) return false;
  return day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export interface DictionaryLimits {
  pairs: number;
  keyLength: number;
  valueLength: number;
}

export const METADATA_LIMITS = {
  pairs: 50,
  keyLength: 40,
  valueLength: 500,
} as const satisfies DictionaryLimits;

/** A string to string dictionary within `limits`; a bad pair is named by its key (`metadata.<key>`). */
export const dictionary = (limits: DictionaryLimits) =>
  z.optional(
    z.record(z.string(), z.string("must be a string"), "must be a dictionary of strings").check(
      z.superRefine((pairs, ctx) => {
        const entries = Object.entries(pairs);
        if (entries.length > limits.pairs) {
          ctx.addIssue({ code: "custom", message: `must hold at most ${limits.pairs} pairs` });
        }
        for (const [key, value] of entries) {
          if (key.length === 0 || key.length > limits.keyLength) {
            ctx.addIssue({
              code: "custom",
              path: [key],
              message: `keys are 1 to ${limits.keyLength} characters`,
            });
          } else if (value.length > limits.valueLength) {
            ctx.addIssue({
              code: "custom",
              path: [key],
              message: `values are at most ${limits.valueLength} characters`,
            });
          }
        }
      }),
    ),
  );

/** Merchant key/value pairs: at most 50, keys of 1 to 40 characters, values of at most 500. */
export const metadata = dictionary(METADATA_LIMITS);
