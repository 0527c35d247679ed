import { clock } from "../clock.ts";
import type { Scope } from "../db/keys.ts";
import { logger } from "../observability/logger.ts";
import { csvStream } from "./csv.ts";
import type { ExportRecord } from "./export.ts";
import { findExport, finishExport, recordDelivery, takeExport } from "./export-store.ts";
import { exportRows } from "./rows.ts";
import { DeliveryError, deliverBySftp } from "./sftp-delivery.ts";
import { openSecret, pinHostKey, recordDeliveryError, sftpSettingsOf } from "./sftp-settings.ts";
import { exportStorage } from "./storage/index.ts";

/**
 * Running an export: take it (a lease, by a conditional write), stream its rows as CSV in its
 * layout into the export storage, record rows, size and location; a run that fails records why and
 * leaves it to be taken again. A repeated run of a completed export does nothing; a run cut off
 * mid-way is taken again once its lease is over, and rewrites the same file.
 */
export const EXPORT_LEASE_MS = 15 * 60 * 1000;

/** The export's file in the storage: under its environment, by its file name. */
export const storageKey = (record: ExportRecord) => `${record.project_id}/${record.file_name}`;

export type RunOutcome =
  | { kind: "completed"; record: ExportRecord }
  | { kind: "failed"; record: ExportRecord; retry: boolean }
  | { kind: "busy" }
  | { kind: "missing" };

export async function runExport(scope: Scope, id: string): Promise<RunOutcome> {
  const now = clock.now();
  const held = await takeExport(scope, id, now, new Date(now.getTime() + EXPORT_LEASE_MS));
  if (!held) {
    const found = await findExport(scope, id);
    if (!found) return { kind: "missing" };
    return found.status === "completed" ? { kind: "completed", record: found } : { kind: "busy" };
  }
  try {
    const rows = exportRows({
      scope,
      type: held.type,
      from: held.from,
      to: held.to,
      clockOffsetMs: held.clock_offset_ms,
    });
    const { stream, counted } = csvStream(rows, held.type, held.configuration);
    const stored = await exportStorage().write(storageKey(held), stream);
    const at = clock.now().toISOString();
    const outcome = {
      status: "completed",
      rows: counted.rows,
      size: stored.size,
      location: stored.location,
      at,
    } as const;
    if (!(await finishExport(held, outcome))) return { kind: "busy" };
    logger.info("Export completed", {
      export_id: id,
      project_id: scope,
      rows: counted.rows,
      size: stored.size,
    });
    return {
      kind: "completed",
      record: {
        ...held,
        status: "completed",
        rows: counted.rows,
        size: stored.size,
        location: stored.location,
        completed_at: at,
        lease_until: null,
      },
    };
  } catch (error) {
    logger.error("Export failed", { export_id: id, project_id: scope, error });
    const message = "The export could not be written; it will be tried again.";
    await finishExport(held, { status: "failed", error: message });
    return { kind: "failed", record: { ...held, status: "failed", error: message }, retry: true };
  }
}

/**
 * Delivers a completed export to the environment's SFTP server, when it has SFTP settings: pins the
 * server's host key on the first success, refuses another key later. The outcome is recorded on the
 * export (`delivery`) and the settings (`last_error`). Returns whether it was delivered (`skipped`
 * without settings).
 */
export async function deliverExport(
  record: ExportRecord,
  remotePath: string,
): Promise<"delivered" | "failed" | "skipped"> {
  const settings = await sftpSettingsOf(record.project_id);
  if (!settings) return "skipped";
  const at = () => clock.now().toISOString();
  try {
    const secret = await openSecret(settings);
    const body = await exportStorage().read(storageKey(record));
    const { fingerprint } = await deliverBySftp({ settings, secret, remotePath, body });
    if (settings.host_key_fingerprint === null) await pinHostKey(settings, fingerprint);
    await recordDelivery(record, {
      status: "delivered",
      remote_path: remotePath,
      host_key_fingerprint: fingerprint,
      error: null,
      at: at(),
    });
    await recordDeliveryError(settings, null);
    logger.info("Export delivered by SFTP", { export_id: record.id, project_id: record.project_id });
    return "delivered";
  } catch (error) {
    const message =
      error instanceof DeliveryError ? error.message : "The file could not be delivered (an internal error).";
    logger.warn("Export delivery failed", {
      export_id: record.id,
      project_id: record.project_id,
      reason: message,
    });
    await recordDelivery(record, {
      status: "failed",
      remote_path: remotePath,
      host_key_fingerprint: error instanceof DeliveryError ? error.fingerprint : null,
      error: message,
      at: at(),
    });
    await recordDeliveryError(settings, message);
    return "failed";
  }
}
