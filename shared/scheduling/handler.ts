import type { Context } from "aws-lambda";
import { logger } from "../observability/logger.ts";
import { useOwnFunctionArn } from "./index.ts";
import { measuredRun } from "./measured-run.ts";
import { parseJob, type ScheduledJob, type ScheduledJobKind } from "./port.ts";
import { forgetJob, jobName } from "./records.ts";

/**
 * The Lambda handler of a kind of scheduled job (EventBridge Scheduler in AWS, the local scheduler's
 * poller on this machine, both with the job as the event): checks the job, runs it, and forgets its
 * record once it ran. A throw makes the scheduler run it again later (per `JOB_RETRY`).
 */
export function jobHandler<Kind extends ScheduledJobKind>(
  kind: Kind,
  run: (job: Extract<ScheduledJob, { kind: Kind }>) => Promise<string>,
): (event: unknown, context: Context) => Promise<{ outcome: string }> {
  return async (event, context) => {
    const job = parseJob(event);
    if (job.kind !== kind) throw new Error(`A ${kind} job's function was given a ${job.kind} job`);
    useOwnFunctionArn(kind, context.invokedFunctionArn);
    logger.resetKeys();
    logger.appendKeys({ project_id: job.scope, job: jobName(job) });
    return measuredRun(metricName(job), event, async () => {
      const outcome = await run(job as Extract<ScheduledJob, { kind: Kind }>);
      await forgetJob(jobName(job));
      logger.info("Scheduled job ran", { outcome });
      return { outcome };
    });
  };
}

/** A job's name in the metrics' `job` dimension: delayed captures and renewals by what they do. */
function metricName(job: ScheduledJob): string {
  if (job.kind === "capture-invoice") return "capture";
  if (job.kind === "subscription") {
    if (job.action === "charge") return "renewal";
    return job.action === "trial-notice" ? "trial-notice" : "subscription-cancel";
  }
  return job.kind;
}
