import { clock } from "../clock.ts";
import type { Scope } from "../db/keys.ts";
import { logger } from "../observability/logger.ts";
import { csvStream } from "./csv.ts";
import { requestDelivery } from "./delivery-request.ts";
import { type ExportRecord, storageKey } from "./export.ts";
import { findExport, finishExport, takeExport } from "./export-store.ts";
import { exportRows } from "./rows.ts";
import { sftpSettingsOf } from "./sftp-settings.ts";
import { exportStorage } from "./storage/index.ts";

/**
 * Running an export: take it (a lease, by a conditional write), stream its rows as CSV in its
 * layout into the export storage, record rows, size and location; a run that fails records why and
 * leaves it to be taken again. A repeated run of a completed export does nothing; a run cut off
 * mid-way is taken again once its lease is over, and rewrites the same file.
 */
export const EXPORT_LEASE_MS = 15 * 60 * 1000;

export type RunOutcome =
  | { kind: "completed"; record: ExportRecord }
  | { kind: "failed"; record: ExportRecord }
  | { kind: "busy" }
  | { kind: "missing" };

export async function runExport(scope: Scope, id: string): Promise<RunOutcome> {
  const now = clock.now();
  const held = await takeExport(scope, id, now, new Date(now.getTime() + EXPORT_LEASE_MS));
  if (!held) {
    const found = await findExport(scope, id);
    if (!found) return { kind: "missing" };
    if (found.status !== "completed") return { kind: "busy" };
    // The run that completed it may have stopped before requesting its delivery.
    await requestDeliveryOfDaily(found);
    return { kind: "completed", record: found };
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
    const record: ExportRecord = {
      ...held,
      status: "completed",
      rows: counted.rows,
      size: stored.size,
      location: stored.location,
      completed_at: at,
      lease_until: null,
    };
    await requestDeliveryOfDaily(record);
    return { kind: "completed", record };
  } catch (error) {
    logger.error("Export failed", { export_id: id, project_id: scope, error });
    const message = "The export could not be written; it will be tried again.";
    await finishExport(held, { status: "failed", error: message });
    return { kind: "failed", record: { ...held, status: "failed", error: message } };
  }
}

/**
 * An automatic export, once completed, is delivered to the environment's SFTP server when it has
 * SFTP settings: the request (written once) is queued by the table's stream for the delivery worker.
 */
async function requestDeliveryOfDaily(record: ExportRecord): Promise<void> {
  if (record.origin !== "daily" || record.delivery?.status === "delivered") return;
  if (await sftpSettingsOf(record.project_id)) await requestDelivery(record);
}
