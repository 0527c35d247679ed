import { runDailyClose } from "../../shared/payouts/close.ts";
import { jobHandler } from "../../shared/scheduling/handler.ts";

/** The target of the daily-close schedules (`scheduledJobs` in lib/topology.ts). */
export const handler = jobHandler("daily-close", runDailyClose);
