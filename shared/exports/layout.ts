import type { Caller } from "../http/auth.ts";
import {
  type AmountSeparator,
  DEFAULT_SEPARATOR,
  DEFAULT_TIME_FORMAT,
  EXPORT_COLUMNS,
  type ExportType,
  type TimeFormat,
} from "./catalogue.ts";

/**
 * An export layout: which columns an export of its type writes (each possibly renamed), and how
 * it writes times and amounts. `is_default` is not kept on the layout: it is read from the one
 * default item of the type (`keys.exportLayoutDefault`), so two layouts can never both be default.
 */
export interface LayoutConfiguration {
  columns: Array<{ name: string; rename: string | null }>;
  time: { format: TimeFormat };
  /** `precision` null: the currency's own digits. */
  amount: { precision: number | null; separator: AmountSeparator };
}

export interface ExportLayout {
  id: string;
  project_id: string;
  name: string;
  type: ExportType;
  configuration: LayoutConfiguration;
  sandbox: boolean;
  created_at: string;
  updated_at: string;
}

/** Every column of the type, as named, with the default formats: what an export without a layout writes. */
export function builtInConfiguration(type: ExportType): LayoutConfiguration {
  return {
    columns: EXPORT_COLUMNS[type].map((column) => ({ name: column.name, rename: null })),
    time: { format: DEFAULT_TIME_FORMAT },
    amount: { precision: null, separator: DEFAULT_SEPARATOR },
  };
}

export function newLayout(
  caller: Caller,
  id: string,
  fields: { name: string; type: ExportType; configuration: LayoutConfiguration },
  now: Date,
): ExportLayout {
  const at = now.toISOString();
  return {
    id,
    project_id: caller.projectId,
    name: fields.name,
    type: fields.type,
    configuration: fields.configuration,
    sandbox: caller.sandbox,
    created_at: at,
    updated_at: at,
  };
}

export function presentLayout(layout: ExportLayout, isDefault: boolean) {
  return {
    id: layout.id,
    project_id: layout.project_id,
    name: layout.name,
    type: layout.type,
    is_default: isDefault,
    configuration: layout.configuration,
    sandbox: layout.sandbox,
    created_at: layout.created_at,
  };
}

export type PresentedLayout = ReturnType<typeof presentLayout>;

/**
 * The layout `GET /exports/layouts/default/{type}` shows when the environment has chosen none: every
 * column with the default formats. It has no id (it is not stored) and automatic exports do not run
 * for a type without a default of the merchant's.
 */
export function presentBuiltInLayout(caller: Caller, type: ExportType) {
  return {
    id: null,
    project_id: caller.projectId,
    name: "Default",
    type,
    is_default: true,
    configuration: builtInConfiguration(type),
    sandbox: caller.sandbox,
    created_at: null,
  };
}
