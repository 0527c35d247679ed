import { Duration, type RemovalPolicy, type Stack } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import {
  CfnSchedule,
  CfnScheduleGroup,
  ContextAttribute,
  ScheduleExpression,
} from "aws-cdk-lib/aws-scheduler";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { ApiFunction, type CardVaultKeys, grantCardVault, grantTable } from "./api-function.ts";
import { grantScheduling, type SchedulingRefs } from "./scheduling.ts";
import { functionId, type RecurringJobDeclaration, type Topology } from "./topology.ts";

/**
 * The recurring jobs of `lib/topology.ts` in AWS: each a function that an EventBridge Scheduler
 * schedule (`rate(n minutes)`) invokes, through a role that may invoke that one function only.
 *
 * EventBridge Scheduler rather than an EventBridge rule: its target has a retry policy and a
 * dead-letter queue of its own, so a run that fails is retried and one given up lands in the same
 * dead-letter queue (and alarm) as the one-time jobs; it invokes through a role, so the function
 * needs no resource policy; and it is the scheduler the architecture already uses.
 *
 * The schedules have a group of their own, not the one-time jobs' group: the functions that create
 * and delete one-time jobs may delete every schedule of that group (job names are not known in
 * advance), and must not be able to stop a recurring job.
 */
export interface RecurringJobsProps {
  jobs: Topology["recurringJobs"];
  table: ITable;
  cardKeys: CardVaultKeys;
  /** For the jobs that schedule or cancel one-time jobs. */
  scheduling: SchedulingRefs;
  /** Where a run that exhausted its retries goes (the scheduled jobs' dead-letter queue). */
  deadLetters: Queue;
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
}

export interface BuiltRecurringJobs {
  /** The schedules' group; none without recurring jobs. */
  group?: CfnScheduleGroup;
  /** The function of each recurring job, by handler. */
  functions: Map<string, ApiFunction>;
  /** The schedule of each recurring job, by its name in `recurringJobs`. */
  schedules: Map<string, CfnSchedule>;
}

/**
 * A run is only worth retrying until the next one is due: every run decides from current state, so
 * the next one does whatever a failed one left undone. A run still failing then is given up to the
 * dead-letter queue, whose alarm tells that the job keeps failing.
 */
const RECURRING_RETRY_ATTEMPTS = 3;

/** Lambda's limit. */
const MAX_LAMBDA_TIMEOUT_SECONDS = 900;

export function buildRecurringJobs(stack: Stack, props: RecurringJobsProps): BuiltRecurringJobs {
  const functions = new Map<string, ApiFunction>();
  const schedules = new Map<string, CfnSchedule>();
  const jobs = Object.entries(props.jobs);
  if (jobs.length === 0) return { functions, schedules };

  // A group holds no data a stage keeps: it goes with the stack, and its schedules with it.
  const group = new CfnScheduleGroup(stack, "RecurringSchedules", {});
  for (const [name, job] of jobs) {
    checkDeclaration(name, job);
    const id = functionId(job.handler);
    const fn = new ApiFunction(stack, id, {
      handler: job.handler,
      environment: props.environment,
      logRemovalPolicy: props.removalPolicy,
      timeout: Duration.seconds(job.timeoutSeconds),
    });
    grantTable(fn, props.table, job.table);
    if (job.cardVault) grantCardVault(fn, props.cardKeys, job.cardVault);
    if (job.scheduler) grantScheduling(fn, props.scheduling, job.scheduler);
    functions.set(job.handler, fn);

    const role = new Role(stack, `${id}SchedulerRole`, {
      assumedBy: new ServicePrincipal("scheduler.amazonaws.com", {
        conditions: { StringEquals: { "aws:SourceAccount": stack.account } },
      }),
      description: `EventBridge Scheduler runs ${job.handler} (recurring job ${name})`,
    });
    role.addToPolicy(
      new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [fn.functionArn] }),
    );
    props.deadLetters.grantSendMessages(role);

    const rate = Duration.minutes(job.rateMinutes);
    schedules.set(
      name,
      new CfnSchedule(stack, `${id}Schedule`, {
        groupName: group.ref,
        description: `Recurring job ${name}: runs ${job.handler} every ${job.rateMinutes} minute(s)`,
        scheduleExpression: ScheduleExpression.rate(rate).expressionString,
        flexibleTimeWindow: { mode: "OFF" },
        state: "ENABLED",
        target: {
          arn: fn.functionArn,
          roleArn: role.roleArn,
          input: JSON.stringify({ recurringJob: name, scheduledTime: ContextAttribute.scheduledTime }),
          retryPolicy: {
            maximumRetryAttempts: RECURRING_RETRY_ATTEMPTS,
            // EventBridge Scheduler's minimum is 60 seconds, which is also the shortest rate.
            maximumEventAgeInSeconds: rate.toSeconds(),
          },
          deadLetterConfig: { arn: props.deadLetters.queueArn },
        },
      }),
    );
  }
  return { group, functions, schedules };
}

function checkDeclaration(name: string, job: RecurringJobDeclaration): void {
  if (!Number.isInteger(job.rateMinutes) || job.rateMinutes < 1) {
    throw new Error(`Recurring job ${name}: rateMinutes must be a whole number of minutes, at least 1`);
  }
  const limit = Math.min(job.rateMinutes * 60, MAX_LAMBDA_TIMEOUT_SECONDS);
  if (!Number.isInteger(job.timeoutSeconds) || job.timeoutSeconds < 1 || job.timeoutSeconds > limit) {
    throw new Error(
      `Recurring job ${name}: timeoutSeconds must be between 1 and ${limit} (its rate, and Lambda's limit)`,
    );
  }
}
