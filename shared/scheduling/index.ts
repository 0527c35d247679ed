import { type ClockedEnvironment, clock, nowIn } from "../clock.ts";
import { eventBridgeScheduler, schedulerClient } from "./eventbridge.ts";
import { JOB_TARGET_VARIABLES, type ScheduledJobKind, type ScheduleRequest, type Scheduler } from "./port.ts";
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

/**
 * A job's function that schedules jobs of its own kind (a renewal schedules the next one) cannot be
 * told its own ARN in its environment (CloudFormation would see a cycle): it gives it from its
 * invocation context.
 */
const ownFunctions = new Map<ScheduledJobKind, string>();
export function useOwnFunctionArn(kind: ScheduledJobKind, arn: string): void {
  ownFunctions.set(kind, arn);
}

let chosen: Scheduler | undefined;

export function scheduler(): Scheduler {
  chosen ??=
    process.env.SCHEDULER === "eventbridge"
      ? eventBridgeScheduler(
          schedulerClient,
          () => ({
            group: required("SCHEDULE_GROUP"),
            roleArn: required("SCHEDULER_ROLE_ARN"),
            targetArn: (kind) => ownFunctions.get(kind) ?? required(JOB_TARGET_VARIABLES[kind]),
            deadLetterArn: required("SCHEDULE_DLQ_ARN"),
          }),
          () => required("SCHEDULE_GROUP"),
        )
      : tableScheduler;
  return chosen;
}

type Observer = (request: ScheduleRequest) => void;
const observers = new Set<Observer>();

/**
 * Calls `observer` with every job this process schedules until the returned function is called:
 * a sandbox clock's advance runs the jobs its jobs schedule without waiting for the index.
 */
export function observeScheduling(observer: Observer): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/**
 * Schedules a job of an environment: due at `request.at` in the environment's business time, fired
 * when real time gets there (earlier in real time for a sandbox whose clock is ahead).
 */
export async function scheduleJob(request: ScheduleRequest, environment: ClockedEnvironment): Promise<void> {
  const ahead = nowIn(environment).getTime() - clock.now().getTime();
  await scheduler().schedule(request, new Date(request.at.getTime() - ahead));
  for (const observer of observers) observer(request);
}

export async function cancelJob(name: string): Promise<void> {
  await scheduler().cancel(name);
}
