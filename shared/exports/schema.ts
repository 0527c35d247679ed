import { invalidField } from "../http/errors.ts";
import { booleanField, requiredText, text, timestamp } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";
import {
  AMOUNT_PRECISIONS,
  AMOUNT_SEPARATORS,
  EXPORT_COLUMNS,
  EXPORT_TYPES,
  type ExportType,
  TIME_FORMAT_NAMES,
} from "./catalogue.ts";
import { builtInConfiguration, type LayoutConfiguration } from "./layout.ts";

/** Export layout inputs (`POST /exports/layouts`, `PUT /exports/layouts/{id}`) and export requests. */

export const LAYOUT_NAME_LENGTH = 100;
export const COLUMN_RENAME_LENGTH = 100;

/** `""` and `null` are "not given", as everywhere. */
const blankIsUndefined = (value: unknown) => (value === "" || value === null ? undefined : value);

const precision = z.preprocess(
  (value) => (typeof value === "string" && /^\d+$/.test(value) ? Number(value) : blankIsUndefined(value)),
  z.optional(
    z.number("must be an integer from 0 to 4").check(
      z.int("must be an integer from 0 to 4"),
      z.refine((value) => (AMOUNT_PRECISIONS as readonly number[]).includes(value), {
        message: `must be one of ${AMOUNT_PRECISIONS.join(", ")}`,
      }),
    ),
  ),
);

const column = z.object({
  name: requiredText(80),
  rename: text(COLUMN_RENAME_LENGTH),
});

/**
 * A layout's configuration as sent: the three keys, each possibly null (then the default), or the
 * whole configuration null. Column names are checked against the type afterwards
 * (`resolveConfiguration`), since a `PUT` takes its type from the stored layout.
 */
export const configurationInput = z.preprocess(
  blankIsUndefined,
  z.optional(
    z.object({
      columns: z.preprocess(
        blankIsUndefined,
        z.optional(
          z
            .array(column, "must be a list of columns")
            .check(z.minLength(1, "must name at least one column"), z.maxLength(100, "too many columns")),
        ),
      ),
      time: z.preprocess(
        blankIsUndefined,
        z.optional(
          z.object({
            format: z.preprocess(
              blankIsUndefined,
              z.optional(
                z.enum(TIME_FORMAT_NAMES, { error: `must be one of ${TIME_FORMAT_NAMES.join(", ")}` }),
              ),
            ),
          }),
        ),
      ),
      amount: z.preprocess(
        blankIsUndefined,
        z.optional(
          z.object({
            precision,
            separator: z.preprocess(
              blankIsUndefined,
              z.optional(
                z.enum(AMOUNT_SEPARATORS, { error: `must be one of ${AMOUNT_SEPARATORS.join(" ")}` }),
              ),
            ),
          }),
        ),
      ),
    }),
  ),
);

export type ConfigurationInput = z.output<typeof configurationInput>;

export const exportType = z.enum(EXPORT_TYPES, {
  error: (issue) => (issue.input === undefined ? "is required" : `must be one of ${EXPORT_TYPES.join(", ")}`),
});

const requiredTimestamp = z.pipe(
  timestamp,
  z.string({
    error: (issue) =>
      issue.input === undefined || issue.input === null ? "is required" : "must be a date and time",
  }),
);

/** `POST /exports` */
export const requestExportInput = z.object({
  type: exportType,
  layout_id: z.preprocess(
    (value) => (value === "" ? null : value),
    z.optional(z.nullable(z.string("must be an export layout id"))),
  ),
  from: requiredTimestamp,
  to: requiredTimestamp,
});

export const createLayoutInput = z.object({
  name: requiredText(LAYOUT_NAME_LENGTH),
  type: exportType,
  is_default: booleanField,
  configuration: configurationInput,
});

export const updateLayoutInput = z.object({
  name: z.optional(requiredText(LAYOUT_NAME_LENGTH)),
  /** Sent back unchanged by clients that echo what they read; a layout's type never changes. */
  type: z.optional(z.unknown()),
  is_default: booleanField,
  configuration: configurationInput,
});

/**
 * The configuration to store: what was sent, its unset parts the defaults, every column one of the
 * type's (named in the error: `configuration.columns[2].name`), and no column twice.
 */
export function resolveConfiguration(type: ExportType, input: ConfigurationInput): LayoutConfiguration {
  const defaults = builtInConfiguration(type);
  if (!input) return defaults;
  const known = new Set(EXPORT_COLUMNS[type].map((definition) => definition.name));
  const seen = new Set<string>();
  const columns = input.columns?.map((entry, index) => {
    if (!known.has(entry.name)) {
      throw invalidField(
        `configuration.columns[${index}].name`,
        `is not a column of ${type} exports (GET /exports/layouts/options/${type} lists them)`,
        "invalid-configuration",
      );
    }
    if (seen.has(entry.name)) {
      throw invalidField(
        `configuration.columns[${index}].name`,
        "is already in the layout",
        "invalid-configuration",
      );
    }
    seen.add(entry.name);
    return { name: entry.name, rename: entry.rename ?? null };
  });
  return {
    columns: columns ?? defaults.columns,
    time: { format: input.time?.format ?? defaults.time.format },
    amount: {
      precision: input.amount?.precision ?? defaults.amount.precision,
      separator: input.amount?.separator ?? defaults.amount.separator,
    },
  };
}

const MAX_SECRET_LENGTH = 16_384;
const secretText = z.preprocess(
  blankIsUndefined,
  z.optional(
    z
      .string("must be a string")
      .check(z.maxLength(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)),
  ),
);

/** `host:port`, the host a name or an IPv4 address, or `[IPv6]:port`. */
export const ENDPOINT =
  /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)):(\d{1,5})$/;

/** `PUT /projects/{project_id}/sftp-settings`: one of `password` and `private_key`. */
export const sftpSettingsInput = z.object({
  endpoint: z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
    .check(z.regex(ENDPOINT, "must be host:port (an IPv6 address in brackets)")),
  username: requiredText(100),
  password: secretText,
  private_key: secretText,
});
