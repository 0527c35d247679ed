import { logger } from "../observability/logger.ts";
import { EXPORT_TYPES } from "./catalogue.ts";
import { deliverExport, runExport } from "./run.ts";
import { dailyExport } from "./service.ts";

/**
 * The automatic exports of one day of an environment, run by the daily close (00:00 of the next
 * day on the environment's clock, `functions/jobs/daily-close.ts`): for each type with a default
 * layout, the export of that day's rows in it, delivered to the environment's SFTP server when it
 * has SFTP settings.
 *
 * Idempotent: each export is named by environment, type and day (`dailyExportId`); a repeated run
 * finds it, runs it only if it is not completed, and delivers it only if it was not delivered. A
 * failed delivery is recorded (on the export's `delivery` and the settings' `last_error`), not
 * thrown: it is the merchant's server or settings to fix. A failed run of one type does not stop
 * the others; the first is thrown at the end, so that the job is retried (and the types already
 * done are then skipped).
 *
 * @param scope the environment project id (`proj_…` or `test-proj_…`)
 * @param day the day, `YYYY-MM-DD` (UTC, on the environment's clock)
 */
export async function runDailyExports(scope: string, day: string): Promise<void> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
    throw new RangeError(`runDailyExports takes a day as YYYY-MM-DD, not ${day}`);
  }
  let firstFailure: Error | undefined;
  for (const type of EXPORT_TYPES) {
    try {
      const record = await dailyExport(scope, type, day);
      if (!record) continue;
      if (record.delivery?.status === "delivered") continue;
      const run = await runExport(scope, record.id);
      if (run.kind === "failed" && !run.retry) continue;
      if (run.kind !== "completed")
        throw new Error(`The ${type} export of ${day} did not complete (${run.kind})`);
      // A failed delivery is recorded on the export and the settings (the merchant's to fix: a refused
      // host key, a wrong password); a repeated run tries it again.
      await deliverExport(run.record, run.record.file_name);
    } catch (error) {
      logger.error("Daily export failed", { project_id: scope, type, day, error });
      firstFailure ??= error instanceof Error ? error : new Error(String(error));
    }
  }
  if (firstFailure) throw firstFailure;
}
