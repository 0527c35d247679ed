import { flushMetrics, recordSchedulerRun } from "../observability/metrics.ts";

/**
 * Runs one invocation of a scheduled or recurring job and records it (`SchedulerLag`, from the time
 * it was due to now; `SchedulerFailures`), printed at its end. The due time is the event's
 * `scheduledTime`: EventBridge Scheduler's `<aws.scheduler.scheduled-time>` (`eventbridge.ts`,
 * `lib/recurring-jobs.ts`) or the local scheduler's; a run without one (started by hand) has no lag.
 */
export async function measuredRun<T>(job: string, event: unknown, run: () => Promise<T>): Promise<T> {
  const scheduledTime = Date.parse(String((event as { scheduledTime?: unknown } | null)?.scheduledTime));
  const lagMs = Number.isNaN(scheduledTime) ? undefined : Math.max(0, Date.now() - scheduledTime);
  let failed = true;
  try {
    const result = await run();
    failed = false;
    return result;
  } finally {
    recordSchedulerRun(job, lagMs, failed);
    flushMetrics();
  }
}
