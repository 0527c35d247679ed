import { captureScheduled } from "../../shared/payments/auto-capture.ts";
import { jobHandler } from "../../shared/scheduling/handler.ts";

/** The target of `auto_capture_at` schedules (`scheduledJobs` in lib/topology.ts). */
export const handler = jobHandler("capture-invoice", captureScheduled);
