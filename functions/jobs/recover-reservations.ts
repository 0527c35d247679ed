import { logger } from "../../shared/observability/logger.ts";
import { type RecoveryReport, recoverReservations } from "../../shared/payments/recovery.ts";

/**
 * The recovery job (`recurringJobs` in lib/topology.ts), every minute: settles the payment operations
 * whose request crashed between the gateway call and its settlement (`shared/payments/recovery.ts`).
 */
export const handler = async (): Promise<RecoveryReport> => {
  logger.resetKeys();
  logger.appendKeys({ job: "recover-reservations" });
  return recoverReservations();
};
