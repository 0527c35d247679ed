import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from "@aws-sdk/client-scheduler";
import { afterEach, describe, expect, it, vi } from "vitest";
import { atExpression, eventBridgeScheduler } from "../../shared/scheduling/eventbridge.ts";
import { captureScheduleName, JOB_RETRY, type ScheduleRequest } from "../../shared/scheduling/port.ts";

// No emulator of EventBridge Scheduler exists: the requests the adapter builds are checked as sent.
const settings = {
  group: "PaymentApidev-Schedules",
  roleArn: "arn:aws:iam::123456789012:role/scheduler",
  targetArn: "arn:aws:lambda:eu-west-1:123456789012:function:capture-job",
  deadLetterArn: "arn:aws:sqs:eu-west-1:123456789012:schedule-dlq",
};
const invoiceId = "iv_01JABCDEFGHJKMNPQRSTVWXYZ0";
const request: ScheduleRequest = {
  name: captureScheduleName(invoiceId),
  at: new Date("2031-03-04T05:06:07.250Z"),
  job: { kind: "capture-invoice", scope: "test-proj_1", invoiceId },
};

afterEach(() => {
  vi.restoreAllMocks();
});

function spiedScheduler() {
  const client = new SchedulerClient({ region: "eu-west-1" });
  const send = vi.spyOn(client, "send").mockResolvedValue({} as never);
  return {
    send,
    scheduler: eventBridgeScheduler(
      client,
      () => settings,
      () => settings.group,
    ),
  };
}

describe("the EventBridge Scheduler adapter", () => {
  it("creates one one-time UTC schedule per invoice, deleted after it ran, with retries and a dead-letter queue", async () => {
    const { send, scheduler } = spiedScheduler();
    await scheduler.schedule(request);
    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0]?.[0] as CreateScheduleCommand;
    expect(command).toBeInstanceOf(CreateScheduleCommand);
    expect(command.input).toMatchObject({
      Name: `capture-${invoiceId}`,
      GroupName: settings.group,
      ScheduleExpression: "at(2031-03-04T05:06:08)",
      ScheduleExpressionTimezone: "UTC",
      FlexibleTimeWindow: { Mode: "OFF" },
      ActionAfterCompletion: "DELETE",
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
    });
    expect(command.input.ClientToken).toMatch(/^[0-9a-f]{64}$/);
  });

  it("derives the client token from the request: a retry sends the same one, another invoice another", async () => {
    const { send, scheduler } = spiedScheduler();
    await scheduler.schedule(request);
    await scheduler.schedule({ ...request });
    const other = "iv_01JZZZZZZZZZZZZZZZZZZZZZZZ";
    await scheduler.schedule({
      name: captureScheduleName(other),
      at: request.at,
      job: { ...request.job, invoiceId: other },
    });
    const tokens = send.mock.calls.map((call) => (call[0] as CreateScheduleCommand).input.ClientToken);
    expect(tokens[0]).toBe(tokens[1]);
    expect(tokens[2]).not.toBe(tokens[0]);
  });

  it("treats an existing schedule of the same name as already scheduled", async () => {
    const { send, scheduler } = spiedScheduler();
    send.mockRejectedValueOnce(
      new ConflictException({ Message: "exists", message: "exists", $metadata: {} }),
    );
    await expect(scheduler.schedule(request)).resolves.toBeUndefined();
  });

  it("passes other failures on, so that the request fails before any money moves", async () => {
    const { send, scheduler } = spiedScheduler();
    send.mockRejectedValueOnce(new Error("throttled"));
    await expect(scheduler.schedule(request)).rejects.toThrow("throttled");
  });

  it("cancels by deleting the invoice's schedule from the group; a schedule already gone is fine", async () => {
    const { send, scheduler } = spiedScheduler();
    await scheduler.cancel(request.name);
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
