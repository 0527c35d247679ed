import { EXPORT_TYPES } from "./catalogue.ts";
import { dailyExport } from "./service.ts";

/**
 * The automatic exports of one day of an environment, requested by the daily close (00:00 of the
 * next day on the environment's clock, `functions/jobs/daily-close.ts`): for each type with a
 * default layout, the export of that day's rows in it.
 *
 * Each is recorded `pending` here; the table's stream queues its run (`enqueue.ts`), the export
 * queue's worker runs it (`run.ts`, with the time a large export needs) and, when the environment has
 * SFTP settings, requests its delivery, which the delivery queue's worker makes
 * (`deliver.ts`). The daily close carries neither the CSV writer nor the SSH client.
 *
 * Idempotent: each export is named by environment, type and day (`dailyExportId`); a repeated call
 * finds the exports it made.
 *
 * @param scope the environment project id (`proj_…` or `test-proj_…`)
 * @param day the day, `YYYY-MM-DD` (UTC, on the environment's clock)
 */
export async function runDailyExports(scope: string, day: string): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
    throw new RangeError(`runDailyExports takes a day as YYYY-MM-DD, not ${day}`);
  }
  for (const type of EXPORT_TYPES) await dailyExport(scope, type, day);
}
