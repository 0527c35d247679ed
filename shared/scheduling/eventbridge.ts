import { createHash } from "node:crypto";
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { JOB_RETRY, type ScheduleRequest, type Scheduler } from "./port.ts";

/**
 * The scheduler port on EventBridge Scheduler: one one-time schedule per job, in the stage's
 * schedule group, targeting the job's function with the job as its input, deleted by the service
 * once it ran, retried per `JOB_RETRY` and then sent to the dead-letter queue.
 *
 * Idempotent by construction: the name and the `ClientToken` are derived from the request (never
 * random), so a retried `CreateSchedule` is recognised as the same request, and a schedule that
 * already exists under the name (`ConflictException`) means the job is already scheduled.
 */
export interface EventBridgeSettings {
  group: string;
  /** The role the scheduler assumes to invoke the target (and send to the dead-letter queue). */
  roleArn: string;
  /** The job function (`scheduledJobs` in `lib/topology.ts`). */
  targetArn: string;
  deadLetterArn: string;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the second so that the job never fires early. */
export function atExpression(at: Date): string {
  const seconds = Math.ceil(at.getTime() / 1000) * 1000;
  return `at(${new Date(seconds).toISOString().slice(0, 19)})`;
}

/** 64 hex characters of a hash of what the request asks for: the same request, the same token. */
export function clientToken(request: ScheduleRequest): string {
  return createHash("sha256")
    .update(`${request.name}|${request.at.toISOString()}|${JSON.stringify(request.job)}`)
    .digest("hex");
}

export function createScheduleInput(
  request: ScheduleRequest,
  settings: EventBridgeSettings,
): CreateScheduleCommandInput {
  return {
    Name: request.name,
    GroupName: settings.group,
    ClientToken: clientToken(request),
    ScheduleExpression: atExpression(request.at),
    ScheduleExpressionTimezone: "UTC",
    FlexibleTimeWindow: { Mode: "OFF" },
    ActionAfterCompletion: "DELETE",
    State: "ENABLED",
    Description: `${request.job.kind} ${request.job.invoiceId}`,
    Target: {
      Arn: settings.targetArn,
      RoleArn: settings.roleArn,
      Input: JSON.stringify(request.job),
      RetryPolicy: {
        MaximumRetryAttempts: JOB_RETRY.maximumAttempts,
        MaximumEventAgeInSeconds: JOB_RETRY.maximumEventAgeSeconds,
      },
      DeadLetterConfig: { Arn: settings.deadLetterArn },
    },
  };
}

export function eventBridgeScheduler(
  client: SchedulerClient,
  settings: () => EventBridgeSettings,
  group: () => string,
): Scheduler {
  return {
    async schedule(request) {
      try {
        await client.send(new CreateScheduleCommand(createScheduleInput(request, settings())));
      } catch (error) {
        if (error instanceof ConflictException) return;
        throw error;
      }
    },
    async cancel(name) {
      try {
        await client.send(new DeleteScheduleCommand({ Name: name, GroupName: group() }));
      } catch (error) {
        if (error instanceof ResourceNotFoundException) return;
        throw error;
      }
    },
  };
}

/** One client per container, created on first use. */
let sharedClient: SchedulerClient | undefined;
export function schedulerClient(): SchedulerClient {
  sharedClient ??= new SchedulerClient({});
  return sharedClient;
}
