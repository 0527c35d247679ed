import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { clock, nowIn } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { conditionFailedItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, conflict, invalidField } from "../http/errors.ts";
import { logger } from "../observability/logger.ts";
import { captureScheduled } from "../payments/auto-capture.ts";
import { type ProjectEnvironment, rememberEnvironment } from "../projects/environment.ts";
import { observeScheduling } from "../scheduling/index.ts";
import type { ScheduledJob } from "../scheduling/port.ts";
import { dueJobsOf, forgetJob, jobName } from "../scheduling/records.ts";
import { runSubscriptionJob } from "../subscriptions/billing.ts";
import { parseTimestamp } from "../validation/fields.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";

/**
 * The sandbox clock: each sandbox environment has a clock of its own, real time plus an offset the
 * merchant moves forward to test renewals, trials, dunning and automatic captures without waiting
 * (`nowIn` in `shared/clock.ts`). Advancing it runs, before answering, every job of the environment
 * that became due, in due order, including those the jobs schedule on the way (a renewal's next
 * renewal, a dunning retry), whichever scheduler fires them otherwise: jobs are found in the table
 * by environment and due time, so this works on a deployed stage too. The clock walks through each
 * job's due time on the way, so every job runs at its own time (a renewal due on the 30th records
 * the 30th). Live environments have no such clock.
 */
export const MAX_ADVANCE_DAYS = 2 * 366;
/** Jobs run per advance at most; the rest wait for the next advance (the answer says how many). */
export const MAX_JOBS_PER_ADVANCE = 500;

const sandboxOnly = () =>
  new ApiError(
    403,
    "request.environment.sandbox-only",
    "The clock can only be moved in a sandbox environment: use the project's sandbox credentials.",
  );

export const advanceInput = z.object({
  advance_to: z.pipe(
    z
      .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
      .check(
        z.refine(
          (value) => parseTimestamp(value) !== undefined,
          "must be a date and time in ISO 8601 or RFC 1123 format",
        ),
      ),
    z.transform((value) => (parseTimestamp(value) as Date).toISOString()),
  ),
});

function presentClock(environment: ProjectEnvironment) {
  return { now: nowIn(environment).toISOString() };
}

/** `GET /sandbox/clock` */
export function readClock(caller: Caller) {
  if (!caller.sandbox) throw sandboxOnly();
  return presentClock(caller.environment);
}

export interface RanJob {
  name: string;
  kind: ScheduledJob["kind"];
  due_at: string;
  outcome: string;
}

/** `POST /sandbox/clock` with `advance_to`. */
export async function advanceClock(caller: Caller, input: unknown) {
  if (!caller.sandbox) throw sandboxOnly();
  const fields = parseInput(advanceInput, input);
  // The environment as stored: the clock is never moved from a cached copy.
  const environment = await freshEnvironment(caller.projectId);
  const now = nowIn(environment);
  const target = new Date(fields.advance_to);
  if (target.getTime() <= now.getTime())
    throw invalidField("advance_to", `must be later than the clock's now, ${now.toISOString()}`);
  if (target.getTime() > now.getTime() + MAX_ADVANCE_DAYS * 24 * 3600 * 1000) {
    throw invalidField("advance_to", "must be at most 2 years ahead of the clock's now");
  }
  const ran = await runDueJobs(caller, environment, target);
  return { clock: presentClock(ran.environment), jobs: ran.jobs, jobs_remaining: ran.remaining };
}

/** The environment with its clock at `at` (never moved back): stored, and seen by this container. */
async function clockAt(environment: ProjectEnvironment, at: Date): Promise<ProjectEnvironment> {
  if (at.getTime() <= nowIn(environment).getTime()) return environment;
  const moved = await moveClock(environment, at.getTime() - clock.now().getTime());
  rememberEnvironment(moved);
  return moved;
}

async function freshEnvironment(id: string): Promise<ProjectEnvironment> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.project(id), ConsistentRead: true }),
  );
  if (!Item) throw new Error(`Environment ${id} is missing`);
  return Item as ProjectEnvironment;
}

/** Sets the clock's offset on the condition that nobody moved it meanwhile. */
async function moveClock(environment: ProjectEnvironment, offset: number): Promise<ProjectEnvironment> {
  const previous = environment.clock_offset_ms;
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(environment.id),
        UpdateExpression: "SET #offset = :offset",
        ConditionExpression: previous === undefined ? "attribute_not_exists(#offset)" : "#offset = :previous",
        ExpressionAttributeNames: { "#offset": "clock_offset_ms" },
        ExpressionAttributeValues: {
          ":offset": offset,
          ...(previous === undefined ? {} : { ":previous": previous }),
        },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "NONE",
      }),
    );
    return Attributes as ProjectEnvironment;
  } catch (error) {
    if (conditionFailedItem(error) !== null) {
      throw conflict(
        "request.sandbox.clock-moved",
        "The clock was moved by another request meanwhile; read it and try again.",
      );
    }
    throw error;
  }
}

/** The job's work, as its function does it. */
function runJob(job: ScheduledJob): Promise<string> {
  return job.kind === "capture-invoice" ? captureScheduled(job) : runSubscriptionJob(job);
}

async function runDueJobs(
  caller: Caller,
  start: ProjectEnvironment,
  until: Date,
): Promise<{ environment: ProjectEnvironment; jobs: RanJob[]; remaining: number }> {
  let environment = start;
  const scheduledMeanwhile: Array<{ name: string; at: Date; job: ScheduledJob }> = [];
  const stopObserving = observeScheduling((request) => {
    if (request.job.scope === caller.projectId) scheduledMeanwhile.push(request);
  });
  const done = new Set<string>();
  const ran: RanJob[] = [];
  try {
    for (;;) {
      const stored = await dueJobsOf(caller.projectId, until, MAX_JOBS_PER_ADVANCE);
      const candidates = [
        ...stored.map((job) => ({ name: job.name, at: new Date(job.dueAt), job: job.job })),
        ...scheduledMeanwhile.filter((request) => request.at.getTime() <= until.getTime()),
      ]
        .filter((candidate) => !done.has(candidate.name))
        .sort((a, b) => a.at.getTime() - b.at.getTime() || (a.name < b.name ? -1 : 1));
      const next = candidates[0];
      if (!next || ran.length >= MAX_JOBS_PER_ADVANCE) {
        environment = await clockAt(environment, until);
        return { environment, jobs: ran, remaining: next ? candidates.length : 0 };
      }
      environment = await clockAt(environment, next.at);
      done.add(next.name);
      ran.push({
        name: next.name,
        kind: next.job.kind,
        due_at: next.at.toISOString(),
        outcome: await runOne(next.job),
      });
    }
  } finally {
    stopObserving();
  }
}

/** Runs a job as its scheduler would; a job that fails stays with its scheduler, which retries it. */
async function runOne(job: ScheduledJob): Promise<string> {
  try {
    const outcome = await runJob(job);
    await forgetJob(jobName(job));
    return outcome;
  } catch (error) {
    logger.warn("A due job failed during a clock advance; its scheduler runs it again", {
      job: jobName(job),
      error,
    });
    return `failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
