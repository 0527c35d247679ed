import { ArnFormat, CfnOutput, Duration, type RemovalPolicy, Stack, Token, Validations } from "aws-cdk-lib";
import type { Alarm } from "aws-cdk-lib/aws-cloudwatch";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { CfnScheduleGroup } from "aws-cdk-lib/aws-scheduler";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { alarmOnDeadLetters } from "./alarms.ts";
import { ApiFunction, grantTable } from "./api-function.ts";
import { functionId, type SchedulerAccess, scheduledJobs } from "./topology.ts";

/**
 * The scheduled jobs of `lib/topology.ts` in AWS (the local stack fires the same handlers from
 * `lib/local/scheduler.ts`): a schedule group the functions create one-time schedules in
 * (`shared/scheduling/eventbridge.ts`), the job function, the role EventBridge Scheduler assumes to
 * invoke it (and nothing else), and the dead-letter queue of schedules that gave up, with an alarm.
 */
export interface ScheduledJobsProps {
  table: Table;
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
}

export interface BuiltScheduledJobs {
  /** Named by CloudFormation (its `ref` is the name), so two stages never collide. */
  group: CfnScheduleGroup;
  /** Assumed by EventBridge Scheduler: may invoke the capture job and send to the dead-letter queue. */
  role: Role;
  deadLetters: Queue;
  deadLetterAlarm: Alarm;
  /** The function of each scheduled job, by handler. */
  functions: Map<string, ApiFunction>;
  /** Lets a route's function schedule or cancel jobs, and tells it how (its environment). */
  grant(fn: LambdaFunction, access: SchedulerAccess): void;
}

/** Retained as long as EventBridge Scheduler retries (a day) and well beyond. */
const DEAD_LETTER_RETENTION = Duration.days(14);

export function buildScheduledJobs(stack: Stack, props: ScheduledJobsProps): BuiltScheduledJobs {
  const job = scheduledJobs.captureInvoice;
  const group = new CfnScheduleGroup(stack, "Schedules", {});
  group.applyRemovalPolicy(props.removalPolicy);
  const groupName = group.ref;
  const groupId = stack.getLogicalId(group);

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
    "A scheduled job (auto_capture_at capture) gave up after its retries: its event is kept in the schedule dead-letter queue.",
  );
  new CfnOutput(stack, "ScheduleDeadLettersUrl", {
    value: deadLetters.queueUrl,
    description: "Dead-letter queue of the scheduled jobs",
  });

  const fn = new ApiFunction(stack, functionId(job.handler), {
    handler: job.handler,
    environment: props.environment,
    logRemovalPolicy: props.removalPolicy,
    timeout: Duration.seconds(job.timeoutSeconds),
  });
  grantTable(fn, props.table, job.table);

  const role = new Role(stack, "SchedulerRole", {
    assumedBy: new ServicePrincipal("scheduler.amazonaws.com", {
      conditions: { StringEquals: { "aws:SourceAccount": stack.account } },
    }),
    description: `EventBridge Scheduler invokes ${job.handler} (auto_capture_at)`,
  });
  role.addToPolicy(new PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [fn.functionArn] }));
  deadLetters.grantSendMessages(role);

  const schedulesArn = Stack.of(stack).formatArn({
    service: "scheduler",
    resource: "schedule",
    resourceName: `${groupName}/*`,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });

  const grant = (target: LambdaFunction, access: SchedulerAccess) => {
    target.addEnvironment("SCHEDULER", "eventbridge");
    target.addEnvironment("SCHEDULE_GROUP", groupName);
    const actions =
      access === "schedule"
        ? ["scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
        : ["scheduler:DeleteSchedule"];
    target.addToRolePolicy(new PolicyStatement({ actions, resources: [schedulesArn] }));
    if (access === "schedule") {
      target.addEnvironment("SCHEDULER_ROLE_ARN", role.roleArn);
      target.addEnvironment("CAPTURE_JOB_FUNCTION_ARN", fn.functionArn);
      target.addEnvironment("SCHEDULE_DLQ_ARN", deadLetters.queueArn);
      target.addToRolePolicy(
        new PolicyStatement({
          actions: ["iam:PassRole"],
          resources: [role.roleArn],
          conditions: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
        }),
      );
    }
    if (!target.role) throw new Error(`${target.node.path} has no role to grant scheduling to`);
    Validations.of(target.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:${nagRendered(stack.region, "AWS::Region")}:${nagRendered(stack.account, "AWS::AccountId")}:schedule/<${groupId}>/*]`,
      reason:
        "Schedules are created per invoice at run time (capture-<invoice id>): their names cannot be listed in advance, so the grant covers the schedules of this stage's own schedule group only.",
    });
  };

  return { group, role, deadLetters, deadLetterAlarm, functions: new Map([[job.handler, fn]]), grant };
}

/**
 * How cdk-nag writes a stack's region or account in a finding: `<AWS::Region>` for an
 * environment-agnostic stack, the value itself once `cdk synth` knows the environment.
 */
function nagRendered(value: string, pseudoParameter: string): string {
  return Token.isUnresolved(value) ? `<${pseudoParameter}>` : value;
}
