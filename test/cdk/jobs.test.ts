import { App, type CfnElement } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { PaymentStack } from "../../lib/payment-stack.ts";
import {
  type RecurringJobDeclaration,
  recurringJobs,
  scheduledJobs,
  type Topology,
  topology,
} from "../../lib/topology.ts";
import {
  actionsOf,
  alias,
  environmentOf,
  functionLogicalId,
  referencedId,
  resource,
  resourcesOf,
  roleStatements,
  SKIP_BUNDLING,
  statementsOf,
  wholeTemplate,
} from "./templates.ts";

/** A second kind of one-time job, on the capture job's handler file under another name. */
const secondJob = {
  ...scheduledJobs.captureInvoice,
  handler: alias("second", scheduledJobs.captureInvoice.handler),
  functionArnVariable: "SECOND_JOB_FUNCTION_ARN",
};

/** A recurring job as the team will declare one (e.g. resolving expired payment reservations). */
const sweep = {
  handler: alias("recurring", "jobs/capture-invoice"),
  rateMinutes: 5,
  timeoutSeconds: 60,
  table: "read",
  cardVault: "open",
  scheduler: "schedule",
} as const satisfies RecurringJobDeclaration;

const synthetic: Topology = {
  ...topology,
  scheduledJobs: { ...scheduledJobs, second: secondJob },
  recurringJobs: { sweep },
};

function build(stage: string, topologyOf: Topology = synthetic) {
  const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
  const stack = new PaymentStack(app, `PaymentApi-${stage}`, { stage, topology: topologyOf });
  app.synth();
  return { stack, template: wholeTemplate(stack) };
}

describe("jobs built from the topology", () => {
  let stack: PaymentStack;
  let template: Template;
  const idOf = (construct: IConstruct) =>
    stack.getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);

  beforeAll(() => {
    ({ stack, template } = build("jobs"));
  }, 60_000);

  describe("scheduled jobs", () => {
    it("gives every scheduled job a function of its own, with its timeout and table access", () => {
      for (const job of [scheduledJobs.captureInvoice, secondJob]) {
        const fn = resource(template, functionLogicalId(template, job.handler));
        expect(fn.Properties.Timeout, job.handler).toBe(job.timeoutSeconds);
        expect(actionsOf(statementsOf(template, functionLogicalId(template, job.handler)))).toContain(
          "dynamodb:PutItem",
        );
      }
    });

    it("lets EventBridge Scheduler's role invoke exactly the scheduled jobs' functions", () => {
      const invoke = roleStatements(template, idOf(stack.scheduledJobs.role)).filter((statement) =>
        actionsOf([statement]).includes("lambda:InvokeFunction"),
      );
      expect(invoke).toHaveLength(1);
      expect([invoke[0]?.Resource].flat().map(referencedId).sort()).toEqual(
        [...Object.values(scheduledJobs), secondJob]
          .map((job) => functionLogicalId(template, job.handler))
          .sort(),
      );
    });

    it("lets the subscription job schedule jobs, telling it every other job function's ARN but not its own (a cycle)", () => {
      const fnId = functionLogicalId(template, scheduledJobs.subscription.handler);
      const variables = environmentOf(resource(template, fnId));
      expect(variables).toMatchObject({
        SCHEDULER: "eventbridge",
        CAPTURE_JOB_FUNCTION_ARN: expect.anything(),
      });
      expect(variables).not.toHaveProperty(scheduledJobs.subscription.functionArnVariable);
      expect(actionsOf(statementsOf(template, fnId))).toEqual(
        expect.arrayContaining([
          "scheduler:CreateSchedule",
          "scheduler:DeleteSchedule",
          "iam:PassRole",
          "kms:Decrypt",
        ]),
      );
    });

    it("tells a function that schedules jobs every job function's ARN, each in the variable its job names", () => {
      const variables = environmentOf(resource(template, functionLogicalId(template, "invoices/authorize")));
      expect(variables).toMatchObject({
        CAPTURE_JOB_FUNCTION_ARN: {
          "Fn::GetAtt": [functionLogicalId(template, scheduledJobs.captureInvoice.handler), "Arn"],
        },
        SECOND_JOB_FUNCTION_ARN: { "Fn::GetAtt": [functionLogicalId(template, secondJob.handler), "Arn"] },
      });
      const cancelling = environmentOf(resource(template, functionLogicalId(template, "invoices/void")));
      expect(cancelling).not.toHaveProperty("CAPTURE_JOB_FUNCTION_ARN");
      expect(cancelling).not.toHaveProperty("SECOND_JOB_FUNCTION_ARN");
    });
  });

  describe("recurring jobs", () => {
    const sweepFunction = () => functionLogicalId(template, sweep.handler);
    const schedule = () => resource(template, idOf(stack.recurringJobs.schedules.get("sweep") as IConstruct));

    it("deploys the real topology's recovery job every minute, with what it declares", () => {
      expect(Object.keys(recurringJobs)).toEqual(["recoverReservations"]);
      const { stack: real, template: realTemplate } = build("real", topology);
      expect(real.recurringJobs.group).toBeDefined();
      const schedules = Object.values(resourcesOf(realTemplate, "AWS::Scheduler::Schedule"));
      expect(schedules).toHaveLength(1);
      expect(schedules[0]?.Properties).toMatchObject({ ScheduleExpression: "rate(1 minute)" });
      const recovery = functionLogicalId(realTemplate, recurringJobs.recoverReservations.handler);
      expect(resource(realTemplate, recovery).Properties.Timeout).toBe(55);
      const actions = actionsOf(statementsOf(realTemplate, recovery));
      expect(actions).toContain("dynamodb:PutItem");
      expect(actions).toContain("kms:Decrypt");
      expect(actions).not.toContain("kms:GenerateDataKey");
      // A capture or refund it settles schedules its day's close (shared/payouts), nothing else.
      expect(actions).toContain("scheduler:CreateSchedule");
      expect(environmentOf(resource(realTemplate, recovery))).toHaveProperty("DAILY_CLOSE_JOB_FUNCTION_ARN");
    });

    it("deploys the daily close as a job, and tells the capture job only its ARN (no cycle with the subscription job)", () => {
      const { template: realTemplate } = build("closing", topology);
      const close = functionLogicalId(realTemplate, scheduledJobs.dailyClose.handler);
      expect(resource(realTemplate, close).Properties.Timeout).toBe(scheduledJobs.dailyClose.timeoutSeconds);
      const capture = environmentOf(
        resource(realTemplate, functionLogicalId(realTemplate, scheduledJobs.captureInvoice.handler)),
      );
      expect(capture).toMatchObject({ DAILY_CLOSE_JOB_FUNCTION_ARN: { "Fn::GetAtt": [close, "Arn"] } });
      expect(capture).not.toHaveProperty(scheduledJobs.subscription.functionArnVariable);
      const capturing = environmentOf(
        resource(realTemplate, functionLogicalId(realTemplate, "invoices/capture")),
      );
      expect(capturing).toHaveProperty("DAILY_CLOSE_JOB_FUNCTION_ARN");
    });

    it("runs each recurring job's function every rateMinutes, in a schedule group of their own", () => {
      const group = stack.recurringJobs.group;
      if (!group) throw new Error("No recurring schedule group");
      expect(idOf(group)).not.toBe(idOf(stack.scheduledJobs.group));
      expect(schedule().Properties).toMatchObject({
        GroupName: { Ref: idOf(group) },
        ScheduleExpression: "rate(5 minutes)",
        FlexibleTimeWindow: { Mode: "OFF" },
        State: "ENABLED",
        Target: {
          Arn: { "Fn::GetAtt": [sweepFunction(), "Arn"] },
          RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 300 },
          DeadLetterConfig: { Arn: { "Fn::GetAtt": [idOf(stack.scheduledJobs.deadLetters), "Arn"] } },
        },
      });
      expect(schedule().Properties).not.toHaveProperty("Name");
      const target = schedule().Properties.Target as { Input: string };
      expect(JSON.parse(target.Input)).toEqual({
        recurringJob: "sweep",
        scheduledTime: "<aws.scheduler.scheduled-time>",
      });
      expect(resource(template, sweepFunction()).Properties.Timeout).toBe(sweep.timeoutSeconds);
    });

    it("invokes it through a role of its own that EventBridge Scheduler of this account assumes, and that may only invoke that function and dead-letter", () => {
      const roleId = referencedId((schedule().Properties.Target as { RoleArn: unknown }).RoleArn);
      expect(roleId).not.toBe(idOf(stack.scheduledJobs.role));
      expect(resource(template, roleId).Properties.AssumeRolePolicyDocument).toMatchObject({
        Statement: [
          {
            Action: "sts:AssumeRole",
            Principal: { Service: "scheduler.amazonaws.com" },
            Condition: { StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } },
          },
        ],
      });
      const statements = roleStatements(template, roleId);
      expect(statements[0]).toEqual({
        Effect: "Allow",
        Action: "lambda:InvokeFunction",
        Resource: { "Fn::GetAtt": [sweepFunction(), "Arn"] },
      });
      expect(statements.slice(1).map((statement) => statement.Resource)).toEqual([
        { "Fn::GetAtt": [idOf(stack.scheduledJobs.deadLetters), "Arn"] },
      ]);
      expect(actionsOf(statements.slice(1))).toContain("sqs:SendMessage");
    });

    it("grants its function what it declares: read-only table, opening the card vault, scheduling one-time jobs", () => {
      const actions = actionsOf(statementsOf(template, sweepFunction()));
      expect(actions).toContain("dynamodb:Query");
      expect(actions).not.toContain("dynamodb:PutItem");
      expect(actions).toContain("kms:Decrypt");
      expect(actions).not.toContain("kms:GenerateDataKey");
      expect(actions).toEqual(expect.arrayContaining(["scheduler:CreateSchedule", "iam:PassRole"]));
      expect(environmentOf(resource(template, sweepFunction()))).toMatchObject({
        SCHEDULE_GROUP: { Ref: idOf(stack.scheduledJobs.group) },
        CAPTURE_JOB_FUNCTION_ARN: {
          "Fn::GetAtt": [functionLogicalId(template, scheduledJobs.captureInvoice.handler), "Arn"],
        },
      });
    });

    it("is not a target of the one-time scheduler role", () => {
      const invoked = roleStatements(template, idOf(stack.scheduledJobs.role)).flatMap((statement) =>
        actionsOf([statement]).includes("lambda:InvokeFunction") ? [statement.Resource].flat() : [],
      );
      expect(invoked).not.toContainEqual({ "Fn::GetAtt": [sweepFunction(), "Arn"] });
    });

    it("refuses a rate that is not a whole number of minutes, or a timeout longer than the rate", () => {
      for (const bad of [
        { ...sweep, rateMinutes: 0 },
        { ...sweep, rateMinutes: 1.5 },
        { ...sweep, rateMinutes: 1, timeoutSeconds: 61 },
      ]) {
        expect(() => build("bad", { ...synthetic, recurringJobs: { bad } }), JSON.stringify(bad)).toThrow(
          /Recurring job bad/,
        );
      }
    });
  });

  it("passes the cdk-nag AwsSolutions checks with scheduled and recurring jobs", () => {
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
  });
});
