import { eventBridgeScheduler, schedulerClient } from "./eventbridge.ts";
import type { Scheduler } from "./port.ts";
import { tableScheduler } from "./table.ts";

/**
 * The one place that decides which scheduler runs: `SCHEDULER=eventbridge` (set on the deployed
 * functions that schedule or cancel jobs) selects EventBridge Scheduler, anything else the table
 * scheduler of the local stack and the tests. Settings are read when first needed, and a missing
 * one fails with its name.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

let chosen: Scheduler | undefined;

export function scheduler(): Scheduler {
  chosen ??=
    process.env.SCHEDULER === "eventbridge"
      ? eventBridgeScheduler(
          schedulerClient(),
          () => ({
            group: required("SCHEDULE_GROUP"),
            roleArn: required("SCHEDULER_ROLE_ARN"),
            targetArn: required("CAPTURE_JOB_FUNCTION_ARN"),
            deadLetterArn: required("SCHEDULE_DLQ_ARN"),
          }),
          () => required("SCHEDULE_GROUP"),
        )
      : tableScheduler;
  return chosen;
}
