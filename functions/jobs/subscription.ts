import { jobHandler } from "../../shared/scheduling/handler.ts";
import { runSubscriptionJob } from "../../shared/subscriptions/billing.ts";

/**
 * The target of subscriptions' schedules (`scheduledJobs` in lib/topology.ts): charges an iteration
 * (or retries it), sends a trial's notice, or cancels at a chosen date.
 */
export const handler = jobHandler("subscription", (job) => runSubscriptionJob(job));
