import { createHash } from "node:crypto";
import type { CreateScheduleCommandInput, SchedulerClient } from "@aws-sdk/client-scheduler";
import { JOB_RETRY, type ScheduledJobKind, type ScheduleRequest, type Scheduler } from "./port.ts";
import { forgetJob, recordJob } from "./records.ts";

/**
 * The scheduler port on EventBridge Scheduler: one one-time schedule per job, in the stage's
 * schedule group, targeting the function of the job's kind with the job as its input, deleted by
 * the service once it ran, retried per `JOB_RETRY` and then sent to the dead-letter queue. Each job
 * is also recorded in the table first (`records.ts`), where a sandbox clock's advance finds it.
 *
 * Idempotent by construction: the name and the `ClientToken` are derived from the request (never
 * random), so a retried `CreateSchedule` is recognised as the same request, and a schedule that
 * already exists under the name (`ConflictException`) means the job is already scheduled.
 *
 * The SDK is loaded, and the client created, on first use, once per container: a payment without
 * `auto_capture_at` never schedules nor cancels, and does not pay for loading it at cold start.
 */
export interface EventBridgeSettings {
  group: string;
  /** The role the scheduler assumes to invoke the target (and send to the dead-letter queue). */
  roleArn: string;
  /** The function of each kind of job (`scheduledJobs` in `lib/topology.ts`). */
  targetArn: (kind: ScheduledJobKind) => string;
  deadLetterArn: string;
}

/** EventBridge Scheduler's context attribute for the time a schedule was due, put in its input. */
export const SCHEDULED_TIME = "<aws.scheduler.scheduled-time>";

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the second so that the job never fires early. */
export function atExpression(at: Date): string {
  const seconds = Math.ceil(at.getTime() / 1000) * 1000;
  return `at(${new Date(seconds).toISOString().slice(0, 19)})`;
}

/** 64 hex characters of a hash of what the request asks for: the same request, the same token. */
export function clientToken(request: ScheduleRequest, fireAt: Date): string {
  return createHash("sha256")
    .update(`${request.name}|${fireAt.toISOString()}|${JSON.stringify(request.job)}`)
    .digest("hex");
}

export function createScheduleInput(
  request: ScheduleRequest,
  fireAt: Date,
  settings: EventBridgeSettings,
): CreateScheduleCommandInput {
  return {
    Name: request.name,
    GroupName: settings.group,
    ClientToken: clientToken(request, fireAt),
    ScheduleExpression: atExpression(fireAt),
    ScheduleExpressionTimezone: "UTC",
    FlexibleTimeWindow: { Mode: "OFF" },
    ActionAfterCompletion: "DELETE",
    State: "ENABLED",
    Description: request.name,
    Target: {
      Arn: settings.targetArn(request.job.kind),
      RoleArn: settings.roleArn,
      // The job, and when it was due (a context attribute the scheduler fills in), for `SchedulerLag`.
      Input: JSON.stringify({ ...request.job, scheduledTime: SCHEDULED_TIME }),
      RetryPolicy: {
        MaximumRetryAttempts: JOB_RETRY.maximumAttempts,
        MaximumEventAgeInSeconds: JOB_RETRY.maximumEventAgeSeconds,
      },
      DeadLetterConfig: { Arn: settings.deadLetterArn },
    },
  };
}

export function eventBridgeScheduler(
  client: () => Promise<SchedulerClient>,
  settings: () => EventBridgeSettings,
  group: () => string,
): Scheduler {
  return {
    async schedule(request, fireAt) {
      // Recorded first: a schedule that fails to be created is created by the caller's retry, and
      // a job found by a sandbox clock's advance runs whether or not its schedule exists.
      await recordJob(request, fireAt, false);
      const { ConflictException, CreateScheduleCommand } = await schedulerSdk();
      try {
        await (await client()).send(
          new CreateScheduleCommand(createScheduleInput(request, fireAt, settings())),
        );
      } catch (error) {
        if (error instanceof ConflictException) return;
        throw error;
      }
    },
    async cancel(name) {
      const { DeleteScheduleCommand, ResourceNotFoundException } = await schedulerSdk();
      try {
        await (await client()).send(new DeleteScheduleCommand({ Name: name, GroupName: group() }));
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }
      await forgetJob(name);
    },
  };
}

let sdk: Promise<typeof import("@aws-sdk/client-scheduler")> | undefined;
function schedulerSdk() {
  sdk ??= import("@aws-sdk/client-scheduler");
  return sdk;
}

/** One client per container, created on first use. */
let sharedClient: Promise<SchedulerClient> | undefined;
export function schedulerClient(): Promise<SchedulerClient> {
  sharedClient ??= schedulerSdk().then(({ SchedulerClient }) => new SchedulerClient({}));
  return sharedClient;
}
