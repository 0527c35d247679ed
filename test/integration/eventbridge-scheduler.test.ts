import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { newId } from "../../shared/ids.ts";
import { atExpression, eventBridgeScheduler } from "../../shared/scheduling/eventbridge.ts";
import {
  captureScheduleName,
  dailyCloseScheduleName,
  JOB_RETRY,
  type ScheduleRequest,
} from "../../shared/scheduling/port.ts";
import { dueJobsOf } from "../../shared/scheduling/records.ts";

// No emulator of EventBridge Scheduler exists: the requests the adapter builds are checked as sent;
// the record it keeps in the table is real (DynamoDB Local).
const targets = {
  "capture-invoice": "arn:aws:lambda:eu-west-1:123456789012:function:capture-job",
  subscription: "arn:aws:lambda:eu-west-1:123456789012:function:subscription-job",
  "daily-close": "arn:aws:lambda:eu-west-1:123456789012:function:daily-close-job",
};
const settings = {
  group: "PaymentApidev-Schedules",
  roleArn: "arn:aws:iam::123456789012:role/scheduler",
  targetArn: (kind: keyof typeof targets) => targets[kind],
  deadLetterArn: "arn:aws:sqs:eu-west-1:123456789012:schedule-dlq",
};
const scope = `test-${newId("project")}`;
const invoiceId = newId("invoice");
const request: ScheduleRequest = {
  name: captureScheduleName(invoiceId),
  at: new Date("2031-03-04T05:06:07.250Z"),
  job: { kind: "capture-invoice", scope, invoiceId },
};
/** A sandbox clock a day ahead: the schedule fires a day earlier in real time. */
const fireAt = new Date("2031-03-03T05:06:07.250Z");

async function record(name: string) {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.scheduledJob(name) }),
  );
  return Item;
}

afterEach(() => {
  vi.restoreAllMocks();
});

function spiedScheduler() {
  const client = new SchedulerClient({ region: "eu-west-1" });
  const send = vi.spyOn(client, "send").mockResolvedValue({} as never);
  return {
    send,
    scheduler: eventBridgeScheduler(
      async () => client,
      () => settings,
      () => settings.group,
    ),
  };
}

describe("the EventBridge Scheduler adapter", () => {
  it("creates one one-time UTC schedule per invoice, deleted after it ran, with retries and a dead-letter queue", async () => {
    const { send, scheduler } = spiedScheduler();
    await scheduler.schedule(request, fireAt);
    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0]?.[0] as CreateScheduleCommand;
    expect(command).toBeInstanceOf(CreateScheduleCommand);
    expect(command.input).toMatchObject({
      Name: `capture-${invoiceId}`,
      GroupName: settings.group,
      ScheduleExpression: "at(2031-03-03T05:06:08)",
      ScheduleExpressionTimezone: "UTC",
      FlexibleTimeWindow: { Mode: "OFF" },
      ActionAfterCompletion: "DELETE",
      Target: {
        Arn: targets["capture-invoice"],
        RoleArn: settings.roleArn,
        // The job, and the time it was due as the scheduler fills it in (for `SchedulerLag`).
        Input: JSON.stringify({ ...request.job, scheduledTime: "<aws.scheduler.scheduled-time>" }),
        RetryPolicy: {
          MaximumRetryAttempts: JOB_RETRY.maximumAttempts,
          MaximumEventAgeInSeconds: JOB_RETRY.maximumEventAgeSeconds,
        },
        DeadLetterConfig: { Arn: settings.deadLetterArn },
      },
    });
    expect(command.input.ClientToken).toMatch(/^[0-9a-f]{64}$/);
  });

  it("records the job in the table first, findable by its environment and business due time", async () => {
    const { scheduler } = spiedScheduler();
    await scheduler.schedule(request, fireAt);
    expect(await record(request.name)).toMatchObject({
      due_at: request.at.toISOString(),
      fire_at: fireAt.toISOString(),
      job: request.job,
    });
    // Not fired by the local poller: no entry in its listing.
    expect((await record(request.name))?.gsi1pk).toBeUndefined();
    expect((await dueJobsOf(scope, request.at, 10)).map((job) => job.name)).toEqual([request.name]);
    expect(await dueJobsOf(scope, new Date(request.at.getTime() - 1), 10)).toEqual([]);
  });

  it("targets the function of the job's kind", async () => {
    const { send, scheduler } = spiedScheduler();
    const subscriptionJob: ScheduleRequest = {
      name: "sub-sub_01JABCDEFGHJKMNPQRSTVWXYZ0-2-0",
      at: request.at,
      job: {
        kind: "subscription",
        scope,
        subscriptionId: "sub_01JABCDEFGHJKMNPQRSTVWXYZ0",
        action: "charge",
        iteration: 2,
        attempt: 0,
      },
    };
    await scheduler.schedule(subscriptionJob, fireAt);
    const command = send.mock.calls[0]?.[0] as CreateScheduleCommand;
    expect(command.input.Target?.Arn).toBe(targets.subscription);
  });

  it("targets the daily close's function with a job named by the environment and the day", async () => {
    const { send, scheduler } = spiedScheduler();
    const closeJob: ScheduleRequest = {
      name: dailyCloseScheduleName(scope, "2031-03-03"),
      at: new Date("2031-03-04T00:00:00.000Z"),
      job: { kind: "daily-close", scope, day: "2031-03-03" },
    };
    await scheduler.schedule(closeJob, fireAt);
    const command = send.mock.calls[0]?.[0] as CreateScheduleCommand;
    expect(command.input).toMatchObject({
      Name: `close-${scope}-2031-03-03`,
      Target: {
        Arn: targets["daily-close"],
        Input: JSON.stringify({ ...closeJob.job, scheduledTime: "<aws.scheduler.scheduled-time>" }),
      },
    });
    expect(closeJob.name).toMatch(/^[0-9a-zA-Z_.-]{1,64}$/);
    expect(dailyCloseScheduleName(scope, "2031-03-03")).toBe(closeJob.name);
    expect(dailyCloseScheduleName(scope, "2031-03-04")).not.toBe(closeJob.name);
  });

  it("derives the client token from the request: a retry sends the same one, another invoice another", async () => {
    const { send, scheduler } = spiedScheduler();
    await scheduler.schedule(request, fireAt);
    await scheduler.schedule({ ...request }, fireAt);
    const other = newId("invoice");
    await scheduler.schedule(
      {
        name: captureScheduleName(other),
        at: request.at,
        job: { kind: "capture-invoice", scope, invoiceId: other },
      },
      fireAt,
    );
    const tokens = send.mock.calls.map((call) => (call[0] as CreateScheduleCommand).input.ClientToken);
    expect(tokens[0]).toBe(tokens[1]);
    expect(tokens[2]).not.toBe(tokens[0]);
  });

  it("treats an existing schedule of the same name as already scheduled", async () => {
    const { send, scheduler } = spiedScheduler();
    send.mockRejectedValueOnce(
      new ConflictException({ Message: "exists", message: "exists", $metadata: {} }),
    );
    await expect(scheduler.schedule(request, fireAt)).resolves.toBeUndefined();
  });

  it("passes other failures on, so that the request fails before any money moves", async () => {
    const { send, scheduler } = spiedScheduler();
    send.mockRejectedValueOnce(new Error("throttled"));
    await expect(scheduler.schedule(request, fireAt)).rejects.toThrow("throttled");
  });

  it("cancels by deleting the invoice's schedule from the group and its record; a schedule already gone is fine", async () => {
    const { send, scheduler } = spiedScheduler();
    await scheduler.schedule(request, fireAt);
    send.mockClear();
    await scheduler.cancel(request.name);
    expect(await record(request.name)).toBeUndefined();
    const command = send.mock.calls[0]?.[0] as DeleteScheduleCommand;
    expect(command).toBeInstanceOf(DeleteScheduleCommand);
    expect(command.input).toEqual({ Name: request.name, GroupName: settings.group });
    send.mockRejectedValueOnce(
      new ResourceNotFoundException({ Message: "gone", message: "gone", $metadata: {} }),
    );
    await expect(scheduler.cancel(request.name)).resolves.toBeUndefined();
  });

  it("keeps schedule names within 64 characters of the allowed set", () => {
    expect(captureScheduleName(invoiceId)).toMatch(/^[0-9a-zA-Z_.-]{1,64}$/);
    const odd = captureScheduleName(`iv_${"x".repeat(80)}/+`);
    expect(odd).toMatch(/^capture-[0-9a-f]{56}$/);
    expect(captureScheduleName(`iv_${"x".repeat(80)}/+`)).toBe(odd);
  });

  it("rounds the time up to the second, so a job never fires before auto_capture_at", () => {
    expect(atExpression(new Date("2031-03-04T05:06:07.000Z"))).toBe("at(2031-03-04T05:06:07)");
    expect(atExpression(new Date("2031-03-04T05:06:07.001Z"))).toBe("at(2031-03-04T05:06:08)");
  });
});
