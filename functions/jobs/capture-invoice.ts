import { logger } from "../../shared/observability/logger.ts";
import { captureScheduled } from "../../shared/payments/auto-capture.ts";
import { parseJob } from "../../shared/scheduling/port.ts";

/**
 * The target of `auto_capture_at` schedules (`scheduledJobs` in lib/topology.ts): EventBridge
 * Scheduler in AWS, the local scheduler's poller on this machine, both with the job as the event.
 * A throw makes the scheduler retry (an operation of the transaction is in flight).
 */
export const handler = async (event: unknown): Promise<{ outcome: string }> => {
  const job = parseJob(event);
  logger.resetKeys();
  logger.appendKeys({ project_id: job.scope, invoice_id: job.invoiceId, job: job.kind });
  const outcome = await captureScheduled(job);
  logger.info("Scheduled capture ran", { outcome });
  return { outcome };
};
