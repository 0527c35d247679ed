import { createHash } from "node:crypto";
import { encodeTime } from "ulid";
import { ID_PREFIXES } from "../ids.ts";
import type { ExportType } from "./catalogue.ts";
import type { LayoutConfiguration } from "./layout.ts";

/**
 * An export: the rows of one type created in `[from, to)` (business time of the environment),
 * written as CSV in a layout to the export storage, by a background run. `pending` until a run
 * takes it, `running` while one holds its lease, then `completed` (rows, size, location) or
 * `failed` (error). Automatic daily exports are also delivered to the environment's SFTP server.
 */
export type ExportStatus = "pending" | "running" | "completed" | "failed";

export interface ExportDelivery {
  status: "delivered" | "failed";
  /** Where the file was written on the SFTP server. */
  remote_path: string;
  /** The SHA-256 fingerprint of the server's host key met (pinned on first use). */
  host_key_fingerprint: string | null;
  error: string | null;
  at: string;
}

export interface ExportRecord {
  id: string;
  project_id: string;
  type: ExportType;
  /** The layout chosen (null: the built-in layout); its configuration is copied at request time. */
  layout_id: string | null;
  configuration: LayoutConfiguration;
  from: string;
  to: string;
  /**
   * How far the environment's clock was ahead of real time when the export was requested: ids
   * carry real time, `created_at` business time, so the id range read starts this much earlier.
   */
  clock_offset_ms: number;
  /** `request` (`POST /exports`) or `daily` (the automatic export of a day, delivered by SFTP). */
  origin: "request" | "daily";
  status: ExportStatus;
  rows: number | null;
  size: number | null;
  file_name: string;
  location: string | null;
  error: string | null;
  delivery: ExportDelivery | null;
  lease_until: string | null;
  sandbox: boolean;
  created_at: string;
  completed_at: string | null;
}

/** The file's name: the type and the period, and the export's id so two exports never share one. */
export function exportFileName(id: string, type: ExportType, from: string, to: string): string {
  const day = (iso: string) => iso.slice(0, 10);
  return `${type}_${day(from)}_${day(to)}_${id}.csv`;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The id of an environment's automatic export of one type and day: a function of the three, so a
 * daily run repeated (a retried job, a clock advanced twice) finds the export it made. Its time part
 * is the day's end, so it lists among exports in creation order like any other.
 */
export function dailyExportId(scope: string, type: ExportType, day: string): string {
  const end = Date.parse(`${day}T00:00:00.000Z`) + 24 * 3600 * 1000;
  const digest = createHash("sha256").update(`${scope}\n${type}\n${day}`).digest();
  let random = "";
  for (let index = 0; index < 16; index++) random += CROCKFORD[(digest[index] ?? 0) % 32];
  return `${ID_PREFIXES.export}${encodeTime(end, 10)}${random}`;
}

/** The export's file in the export storage: under its environment, by its file name. */
export const storageKey = (record: ExportRecord) => `${record.project_id}/${record.file_name}`;

export function presentExport(record: ExportRecord) {
  return {
    id: record.id,
    project_id: record.project_id,
    type: record.type,
    layout_id: record.layout_id,
    from: record.from,
    to: record.to,
    automatic: record.origin === "daily",
    status: record.status,
    rows: record.rows,
    size: record.size,
    file_name: record.file_name,
    location: record.location,
    error: record.error,
    delivery: record.delivery,
    sandbox: record.sandbox,
    created_at: record.created_at,
    completed_at: record.completed_at,
  };
}

export type PresentedExport = ReturnType<typeof presentExport>;
