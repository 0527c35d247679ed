import { ArnFormat, CfnOutput, Duration, type RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import type { Alarm } from "aws-cdk-lib/aws-cloudwatch";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { CfnScheduleGroup } from "aws-cdk-lib/aws-scheduler";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { alarmOnDeadLetters } from "./alarms.ts";
import { ApiFunction, type CardVaultKeys, grantCardVault, grantTable } from "./api-function.ts";
import { nagRendering } from "./nag.ts";
import { functionId, type SchedulerAccess, type Topology } from "./topology.ts";

/**
 * The scheduled jobs of `lib/topology.ts` in AWS (the local stack fires the same handlers from
 * `lib/local/scheduler.ts`): a schedule group the functions create one-time schedules in
 * (`shared/scheduling/eventbridge.ts`), a function per job, the role EventBridge Scheduler assumes to
 * invoke them (and nothing else), and the dead-letter queue of schedules that gave up, with an alarm.
 */
export interface ScheduledJobsProps {
  jobs: Topology["scheduledJobs"];
  table: ITable;
  cardKeys: CardVaultKeys;
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
}

/**
 * What a function needs to schedule or cancel jobs (`grantScheduling`), as values of that function's
 * own stack: a function of a nested stack is given them through the stack's parameters.
 */
export interface SchedulingRefs {
  /** The group of the one-time schedules. */
  groupName: string;
  /** The role EventBridge Scheduler assumes to invoke a job's function. */
  roleArn: string;
  deadLetterArn: string;
  /** The function of each scheduled job, by the variable that passes its ARN (`functionArnVariable`). */
  jobFunctionArns: Readonly<Record<string, string>>;
}

export interface BuiltScheduledJobs {
  /** Named by CloudFormation (its `ref` is the name), so two stages never collide. */
  group: CfnScheduleGroup;
  /** Assumed by EventBridge Scheduler: may invoke the scheduled jobs' functions and send to the dead-letter queue. */
  role: Role;
  deadLetters: Queue;
  deadLetterAlarm: Alarm;
  /** The function of each scheduled job, by handler. */
  functions: Map<string, ApiFunction>;
  /** For `grantScheduling` in this stack. */
  refs: SchedulingRefs;
}

/** Retained as long as EventBridge Scheduler retries (a day) and well beyond. */
const DEAD_LETTER_RETENTION = Duration.days(14);

export function buildScheduledJobs(stack: Stack, props: ScheduledJobsProps): BuiltScheduledJobs {
  const group = new CfnScheduleGroup(stack, "Schedules", {});
  group.applyRemovalPolicy(props.removalPolicy);

  const deadLetters = new Queue(stack, "ScheduleDeadLetters", {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: DEAD_LETTER_RETENTION,
    removalPolicy: props.removalPolicy,
  });
  Validations.of(deadLetters).acknowledge({
    id: "AwsSolutions-SQS3",
    reason:
      "This queue is itself a dead-letter queue: the DeadLetterConfig of the EventBridge Scheduler schedules (jobs that exhausted their retries), not a queue anything consumes.",
  });
  const deadLetterAlarm = alarmOnDeadLetters(
    stack,
    "ScheduleDeadLettersAlarm",
    deadLetters,
    "A scheduled job (e.g. an auto_capture_at capture) or a recurring job gave up after its retries: its event is kept in the schedule dead-letter queue.",
  );
  new CfnOutput(stack, "ScheduleDeadLettersUrl", {
    value: deadLetters.queueUrl,
    description: "Dead-letter queue of the scheduled and recurring jobs",
  });

  const functions = new Map<string, ApiFunction>();
  const jobFunctionArns: Record<string, string> = {};
  for (const job of Object.values(props.jobs)) {
    const fn = new ApiFunction(stack, functionId(job.handler), {
      handler: job.handler,
      environment: props.environment,
      logRemovalPolicy: props.removalPolicy,
      timeout: Duration.seconds(job.timeoutSeconds),
    });
    grantTable(fn, props.table, job.table);
    functions.set(job.handler, fn);
    jobFunctionArns[job.functionArnVariable] = fn.functionArn;
  }

  const role = new Role(stack, "SchedulerRole", {
    assumedBy: new ServicePrincipal("scheduler.amazonaws.com", {
      conditions: { StringEquals: { "aws:SourceAccount": stack.account } },
    }),
    description: `EventBridge Scheduler invokes the scheduled jobs (${[...functions.keys()].join(", ")})`,
  });
  if (functions.size > 0) {
    role.addToPolicy(
      new PolicyStatement({
        actions: ["lambda:InvokeFunction"],
        resources: [...functions.values()].map((fn) => fn.functionArn),
      }),
    );
  }
  deadLetters.grantSendMessages(role);

  const refs: SchedulingRefs = {
    groupName: group.ref,
    roleArn: role.roleArn,
    deadLetterArn: deadLetters.queueArn,
    jobFunctionArns,
  };
  for (const job of Object.values(props.jobs)) {
    const fn = functions.get(job.handler) as ApiFunction;
    if (job.cardVault) grantCardVault(fn, props.cardKeys, job.cardVault);
    if (job.scheduler) {
      // A function cannot be told its own ARN (CloudFormation would see a cycle): a job that
      // schedules its own kind gives it from its invocation context (`shared/scheduling/handler.ts`).
      // A job that names the kinds it schedules is told only theirs: two jobs each told the other's
      // ARN would be a cycle too.
      const kinds = "schedules" in job ? (job.schedules as readonly string[] | undefined) : undefined;
      const wanted = kinds
        ? new Set(
            Object.values(props.jobs)
              .filter((other) => kinds.includes(other.kind))
              .map((other) => other.functionArnVariable),
          )
        : undefined;
      const others = Object.fromEntries(
        Object.entries(jobFunctionArns).filter(
          ([variable]) => variable !== job.functionArnVariable && (!wanted || wanted.has(variable)),
        ),
      );
      grantScheduling(fn, { ...refs, jobFunctionArns: others }, job.scheduler);
    }
  }
  return { group, role, deadLetters, deadLetterAlarm, functions, refs };
}

/**
 * Lets `fn` schedule (create and delete) or only cancel (delete) one-time jobs in the group of
 * `refs`, and tells it how in its environment: the group, and to schedule, the role to pass to
 * EventBridge Scheduler, each job function's ARN and the dead-letter queue.
 */
export function grantScheduling(fn: LambdaFunction, refs: SchedulingRefs, access: SchedulerAccess): void {
  if (!fn.role) throw new Error(`${fn.node.path} has no role to grant scheduling to`);
  fn.addEnvironment("SCHEDULER", "eventbridge");
  fn.addEnvironment("SCHEDULE_GROUP", refs.groupName);
  const schedulesArn = Stack.of(fn).formatArn({
    service: "scheduler",
    resource: "schedule",
    resourceName: `${refs.groupName}/*`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  const actions =
    access === "schedule"
      ? ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
      : ["scheduler:DeleteSchedule"];
  fn.addToRolePolicy(new PolicyStatement({ actions, resources: [schedulesArn] }));
  if (access === "schedule") {
    fn.addEnvironment("SCHEDULER_ROLE_ARN", refs.roleArn);
    for (const [variable, arn] of Object.entries(refs.jobFunctionArns)) fn.addEnvironment(variable, arn);
    fn.addEnvironment("SCHEDULE_DLQ_ARN", refs.deadLetterArn);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ["iam:PassRole"],
        resources: [refs.roleArn],
        conditions: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
      }),
    );
  }
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagRendering(fn, schedulesArn)}]`,
    reason:
      "One-time schedules are created per job at run time (e.g. capture-<invoice id>): their names cannot be listed in advance, so the grant covers the schedules of this stage's own one-time schedule group only.",
  });
}
