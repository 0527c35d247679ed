import { Readable } from "node:stream";
import Big from "big.js";
import { stringify } from "csv-stringify";
import { type ColumnDefinition, EXPORT_COLUMNS, type ExportType, type TimeFormat } from "./catalogue.ts";
import type { LayoutConfiguration } from "./layout.ts";
import type { ExportRow } from "./rows.ts";

/**
 * Rows as CSV in a layout, as a stream: the header (each column's `rename`, or its name), then one
 * record per row, quoted by csv-stringify (RFC 4180) wherever a value needs it (a `,` decimal
 * separator, quotes, line breaks). Nothing is held beyond the record being written.
 */

const two = (value: number) => String(value).padStart(2, "0");

/** A time in one of the layout formats (`TIME_FORMATS`), in UTC. */
export function formatTime(iso: string, name: TimeFormat): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const date = `${at.getUTCFullYear()}-${two(at.getUTCMonth() + 1)}-${two(at.getUTCDate())}`;
  const time = `${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())}`;
  const [year, month, day] = date.split("-");
  switch (name) {
    case "iso8601":
      return at.toISOString();
    case "iso8601_seconds":
      return `${date}T${time}Z`;
    case "date_time":
      return `${date} ${time}`;
    case "date":
      return date;
    case "day_month_year":
      return `${day}/${month}/${year} ${time}`;
    case "month_day_year":
      return `${month}/${day}/${year} ${time}`;
    case "unix":
      return String(Math.floor(at.getTime() / 1000));
    case "unix_milliseconds":
      return String(at.getTime());
  }
}

/** An amount with `precision` decimals (rounded half up), or as stored; `separator` before its decimals. */
export function formatAmount(amount: string, precision: number | null, separator: "." | ","): string {
  const fixed = precision === null ? amount : new Big(amount).toFixed(precision, Big.roundHalfUp);
  return separator === "." ? fixed : fixed.replace(".", separator);
}

function cell(
  value: string | number | boolean | null | undefined,
  column: ColumnDefinition,
  configuration: LayoutConfiguration,
): string {
  if (value === null || value === undefined) return "";
  if (column.kind === "amount" && typeof value === "string") {
    return formatAmount(value, configuration.amount.precision, configuration.amount.separator);
  }
  if (column.kind === "time" && typeof value === "string")
    return formatTime(value, configuration.time.format);
  return String(value);
}

/** The CSV of `rows` in the layout, as a byte stream; `counted.rows` is the number of records written. */
export function csvStream(
  rows: AsyncIterable<ExportRow>,
  type: ExportType,
  configuration: LayoutConfiguration,
): { stream: Readable; counted: { rows: number } } {
  const definitions = new Map(EXPORT_COLUMNS[type].map((column) => [column.name, column]));
  const columns = configuration.columns.flatMap((chosen) => {
    const definition = definitions.get(chosen.name);
    return definition ? [{ definition, header: chosen.rename ?? chosen.name }] : [];
  });
  const counted = { rows: 0 };
  const records = Readable.from(
    (async function* () {
      for await (const row of rows) {
        counted.rows++;
        yield columns.map(({ definition }) => cell(row[definition.name], definition, configuration));
      }
    })(),
  );
  const csv = stringify({
    header: true,
    columns: columns.map(({ header }) => header),
    record_delimiter: "\r\n",
  });
  records.on("error", (error) => csv.destroy(error));
  return { stream: records.pipe(csv), counted };
}
