/**
 * What an export can hold: its types, each type's columns, and the formats a layout may choose.
 * `GET /exports/layouts/options/{type}` shows exactly these choices, and layouts are validated
 * against them.
 */

export const EXPORT_TYPES = ["transactions", "payouts", "payout_items"] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

export function isExportType(value: unknown): value is ExportType {
  return typeof value === "string" && (EXPORT_TYPES as readonly string[]).includes(value);
}

/** How a column's value is written: amounts and times follow the layout's formats. */
export type ColumnKind = "text" | "amount" | "time" | "boolean" | "integer";

export interface ColumnDefinition {
  name: string;
  kind: ColumnKind;
  /** For an amount: the column holding its currency (the currency's digits are the default precision). */
  currencyColumn?: string;
}

const text = (name: string): ColumnDefinition => ({ name, kind: "text" });
const amount = (name: string, currencyColumn = "currency"): ColumnDefinition => ({
  name,
  kind: "amount",
  currencyColumn,
});
const time = (name: string): ColumnDefinition => ({ name, kind: "time" });
const flag = (name: string): ColumnDefinition => ({ name, kind: "boolean" });
const integer = (name: string): ColumnDefinition => ({ name, kind: "integer" });

/** Each type's columns, in the order an export without a layout writes them. */
export const EXPORT_COLUMNS: Readonly<Record<ExportType, readonly ColumnDefinition[]>> = {
  transactions: [
    text("id"),
    text("invoice_id"),
    text("customer_id"),
    text("subscription_id"),
    text("token_id"),
    text("card_id"),
    text("gateway_configuration_id"),
    text("gateway_name"),
    text("name"),
    text("status"),
    amount("amount"),
    amount("authorized_amount"),
    amount("captured_amount"),
    amount("refunded_amount"),
    amount("available_amount"),
    amount("voided_amount"),
    text("currency"),
    text("payment_method"),
    text("error_code"),
    text("three_d_s_status"),
    flag("chargedback"),
    flag("sandbox"),
    time("created_at"),
  ],
  payouts: [
    text("id"),
    text("status"),
    amount("amount"),
    text("currency"),
    text("bank_name"),
    text("bank_summary"),
    integer("sales_transactions"),
    amount("sales_volume"),
    integer("refunds_transactions"),
    amount("refunds_volume"),
    integer("chargebacks_transactions"),
    amount("chargebacks_volume"),
    amount("fees"),
    amount("adjustments"),
    amount("reserve"),
    time("settled_at"),
    time("created_at"),
  ],
  payout_items: [
    text("id"),
    text("payout_id"),
    text("transaction_id"),
    text("type"),
    text("gateway_resource_id"),
    amount("amount"),
    amount("fees"),
    amount("scheme_fee"),
    amount("interchange_fee"),
    amount("gateway_fee"),
    amount("markup_fee"),
    amount("acquirer_fee"),
    amount("other_fee"),
    text("currency"),
    time("created_at"),
  ],
};

/**
 * Time formats a layout may choose, by name, with a sample (2026-03-04 05:06:07.089 UTC). Times
 * are written in UTC.
 */
export const TIME_FORMATS = {
  iso8601: "2026-03-04T05:06:07.089Z",
  iso8601_seconds: "2026-03-04T05:06:07Z",
  date_time: "2026-03-04 05:06:07",
  date: "2026-03-04",
  day_month_year: "04/03/2026 05:06:07",
  month_day_year: "03/04/2026 05:06:07",
  unix: "1772600767",
  unix_milliseconds: "1772600767089",
} as const;
export type TimeFormat = keyof typeof TIME_FORMATS;
export const TIME_FORMAT_NAMES = Object.keys(TIME_FORMATS) as [TimeFormat, ...TimeFormat[]];

/** Decimals an amount may be written with; `null` (the default) keeps the currency's own digits. */
export const AMOUNT_PRECISIONS = [0, 1, 2, 3, 4] as const;
/** The decimal separator of amounts. */
export const AMOUNT_SEPARATORS = [".", ","] as const;
export type AmountSeparator = (typeof AMOUNT_SEPARATORS)[number];

export const DEFAULT_TIME_FORMAT: TimeFormat = "iso8601";
export const DEFAULT_SEPARATOR: AmountSeparator = ".";

/** `GET /exports/layouts/options/{type}`: the choices a layout of the type has. */
export function configurationOptions(type: ExportType) {
  return {
    columns: EXPORT_COLUMNS[type].map((column) => column.name),
    time: { format: TIME_FORMAT_NAMES },
    amount: { precision: [...AMOUNT_PRECISIONS], separator: [...AMOUNT_SEPARATORS] },
  };
}
