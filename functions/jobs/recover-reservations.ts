import { logger } from "../../shared/observability/logger.ts";
import { type RecoveryReport, recoverReservations } from "../../shared/payments/recovery.ts";
import { measuredRun } from "../../shared/scheduling/measured-run.ts";

/**
 * The recovery job (`recurringJobs` in lib/topology.ts), every minute: settles the payment operations
 * whose request crashed between the gateway call and its settlement (`shared/payments/recovery.ts`).
 */
export const handler = async (event: unknown): Promise<RecoveryReport> => {
  logger.resetKeys();
  logger.appendKeys({ job: "recover-reservations" });
  return measuredRun("recover-reservations", event, () => recoverReservations());
};
