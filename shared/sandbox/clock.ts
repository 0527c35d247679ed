import { randomUUID } from "node:crypto";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { clock, nowIn } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { conditionFailedItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, BusyError, conflict, invalidField } from "../http/errors.ts";
import { logger } from "../observability/logger.ts";
import { captureScheduled } from "../payments/auto-capture.ts";
import { runDailyClose } from "../payouts/close.ts";
import { type ProjectEnvironment, rememberEnvironment } from "../projects/environment.ts";
import { observeScheduling } from "../scheduling/index.ts";
import type { ScheduledJob } from "../scheduling/port.ts";
import { countDueJobs, dueJobsOf, forgetJob, isJobRecorded, jobName } from "../scheduling/records.ts";
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
 *
 * An advance works within a time budget, whatever is due: it runs what fits (at most
 * `MAX_JOBS_PER_ADVANCE`), leaves the clock where the work stands, and answers what is still due
 * (`jobs_remaining`); the same call again goes on from there. One advance at a time per environment:
 * it holds the clock (`clock_advance` on the environment, a lease) while it runs, and a concurrent
 * one is refused at once, before it runs anything.
 */
export const MAX_ADVANCE_DAYS = 2 * 366;
/** Jobs run per advance at most; the rest wait for the next call (the answer says how many). */
export const MAX_JOBS_PER_ADVANCE = 500;
/**
 * How long an advance starts new jobs for: well within its function's timeout (29 s, the HTTP API's
 * limit: `timeoutSeconds` of its route), leaving room for the job under way, which may wait for a
 * provider.
 */
export const ADVANCE_WORK_MS = 10_000;
/** No job starts with less time than this left before the function's timeout. */
export const JOB_RESERVE_MS = 12_000;
/** How long an advance holds the clock: past any function's timeout, so a cut-off one frees it. */
const CLOCK_LEASE_MS = 40_000;
/**
 * Jobs of different subscriptions or invoices due within this span run together (`JOB_CONCURRENCY`
 * at a time), the clock at the latest of them, as their scheduler would fire them: a period's
 * renewals of many subscriptions do not wait for each other.
 */
const JOB_BATCH_WINDOW_MS = 5_000;
const JOB_CONCURRENCY = 4;
/** A job another runner holds (an operation in flight) is run again after these waits. */
const BUSY_RETRY_DELAYS_MS = [100, 300, 900];

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

/** The time an advance has: its function's remaining time, and the signal of its timeout. */
export interface AdvanceTime {
  remainingTimeMs(): number;
  signal?: AbortSignal;
}

/** `POST /sandbox/clock` with `advance_to`. */
export async function advanceClock(caller: Caller, input: unknown, time: AdvanceTime) {
  if (!caller.sandbox) throw sandboxOnly();
  const fields = parseInput(advanceInput, input);
  const stopAt = Date.now() + Math.min(ADVANCE_WORK_MS, time.remainingTimeMs() - JOB_RESERVE_MS);
  const lease = randomUUID();
  // The environment as stored, read by the write that takes the clock: never moved from a cached copy.
  const held = await holdClock(caller.projectId, lease);
  let environment = held;
  try {
    const now = nowIn(environment);
    const target = new Date(fields.advance_to);
    if (target.getTime() <= now.getTime())
      throw invalidField("advance_to", `must be later than the clock's now, ${now.toISOString()}`);
    if (target.getTime() > now.getTime() + MAX_ADVANCE_DAYS * 24 * 3600 * 1000) {
      throw invalidField("advance_to", "must be at most 2 years ahead of the clock's now");
    }
    const ran = await runDueJobs(caller, environment, target, lease, {
      stop: () => Date.now() >= stopAt || time.signal?.aborted === true,
    });
    environment = ran.environment;
    return { clock: presentClock(environment), jobs: ran.jobs, jobs_remaining: ran.remaining };
  } finally {
    await releaseClock(environment, lease);
  }
}

const clockAdvancing = () =>
  conflict(
    "request.sandbox.clock-advancing",
    "Another advance of this clock is running; call again once it has answered.",
  );

/**
 * Takes the environment's clock for this advance (a lease, taken over once expired), and reads the
 * environment as stored in the same write.
 */
async function holdClock(id: string, lease: string): Promise<ProjectEnvironment> {
  const now = Date.now();
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(id),
        UpdateExpression: "SET #advance = :advance",
        ConditionExpression:
          "attribute_exists(pk) AND (attribute_not_exists(#advance) OR #advance.#until < :now)",
        ExpressionAttributeNames: { "#advance": "clock_advance", "#until": "until" },
        ExpressionAttributeValues: { ":advance": { id: lease, until: now + CLOCK_LEASE_MS }, ":now": now },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "NONE",
      }),
    );
    return Attributes as ProjectEnvironment;
  } catch (error) {
    if (conditionFailedItem(error) !== null) throw clockAdvancing();
    throw error;
  }
}

/** Gives the clock back (a lease taken over meanwhile is left to its new holder). */
async function releaseClock(environment: ProjectEnvironment, lease: string): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(environment.id),
        UpdateExpression: "REMOVE #advance",
        ConditionExpression: "#advance.#id = :lease",
        ExpressionAttributeNames: { "#advance": "clock_advance", "#id": "id" },
        ExpressionAttributeValues: { ":lease": lease },
        ReturnValuesOnConditionCheckFailure: "NONE",
      }),
    );
  } catch (error) {
    if (conditionFailedItem(error) === null) throw error;
  }
}

/** The environment with its clock at `at` (never moved back): stored, and seen by this container. */
async function clockAt(
  environment: ProjectEnvironment,
  at: Date,
  lease: string,
): Promise<ProjectEnvironment> {
  if (at.getTime() <= nowIn(environment).getTime()) return environment;
  const moved = await moveClock(environment, at.getTime() - clock.now().getTime(), lease);
  rememberEnvironment(moved);
  return moved;
}

/** Sets the clock's offset, as long as this advance holds the clock. */
async function moveClock(
  environment: ProjectEnvironment,
  offset: number,
  lease: string,
): Promise<ProjectEnvironment> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(environment.id),
        UpdateExpression: "SET #offset = :offset",
        ConditionExpression: "#advance.#id = :lease",
        ExpressionAttributeNames: { "#offset": "clock_offset_ms", "#advance": "clock_advance", "#id": "id" },
        ExpressionAttributeValues: { ":offset": offset, ":lease": lease },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "NONE",
      }),
    );
    return Attributes as ProjectEnvironment;
  } catch (error) {
    // The lease expired and another advance took the clock: this one stops here.
    if (conditionFailedItem(error) !== null) throw clockAdvancing();
    throw error;
  }
}

/** The job's work, as its function does it. */
function runJob(job: ScheduledJob): Promise<string> {
  if (job.kind === "capture-invoice") return captureScheduled(job);
  if (job.kind === "daily-close") return runDailyClose(job);
  return runSubscriptionJob(job);
}

/** What a job works on: jobs of one subject run one after the other, never together. */
function subjectOf(job: ScheduledJob): string {
  if (job.kind === "capture-invoice") return job.invoiceId;
  if (job.kind === "daily-close") return `close-${job.day}`;
  return job.subscriptionId;
}

interface Candidate {
  name: string;
  at: Date;
  job: ScheduledJob;
}

async function runDueJobs(
  caller: Caller,
  start: ProjectEnvironment,
  until: Date,
  lease: string,
  budget: { stop(): boolean },
): Promise<{ environment: ProjectEnvironment; jobs: RanJob[]; remaining: number }> {
  let environment = start;
  const scheduledMeanwhile: Candidate[] = [];
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
        .filter((candidate, index, all) => !done.has(candidate.name) && firstOf(all, candidate, index))
        .sort((a, b) => a.at.getTime() - b.at.getTime() || (a.name < b.name ? -1 : 1));
      if (candidates.length === 0) {
        environment = await clockAt(environment, until, lease);
        return { environment, jobs: ran, remaining: 0 };
      }
      // Out of time or jobs (never before a first job: every call makes progress): the clock stays
      // where the work stands, and the same call goes on from there.
      if (ran.length >= MAX_JOBS_PER_ADVANCE || (ran.length > 0 && budget.stop())) {
        return { environment, jobs: ran, remaining: await countDueJobs(caller.projectId, until, done) };
      }
      const batch = nextBatch(candidates, MAX_JOBS_PER_ADVANCE - ran.length);
      environment = await clockAt(environment, (batch.at(-1) as Candidate).at, lease);
      for (const candidate of batch) done.add(candidate.name);
      const outcomes = await Promise.all(batch.map((candidate) => runOne(candidate.job)));
      batch.forEach((candidate, index) => {
        ran.push({
          name: candidate.name,
          kind: candidate.job.kind,
          due_at: candidate.at.toISOString(),
          outcome: outcomes[index] as string,
        });
      });
      // A job that failed stays due (its scheduler retries it): the clock does not go past it, and
      // the answer counts it as remaining, so the same call runs it again.
      const failed = batch.filter((_, index) => (outcomes[index] as string).startsWith("failed"));
      if (failed.length > 0) {
        for (const candidate of failed) done.delete(candidate.name);
        return { environment, jobs: ran, remaining: await countDueJobs(caller.projectId, until, done) };
      }
    }
  } finally {
    stopObserving();
  }
}

const firstOf = (all: Candidate[], candidate: Candidate, index: number) =>
  all.findIndex((other) => other.name === candidate.name) === index;

/**
 * The first due job, and those due within `JOB_BATCH_WINDOW_MS` of it that work on other subjects
 * (at most `JOB_CONCURRENCY`): they run together. A subject's later job waits for the next batch.
 */
function nextBatch(candidates: Candidate[], room: number): Candidate[] {
  const first = candidates[0] as Candidate;
  const batch: Candidate[] = [];
  const subjects = new Set<string>();
  for (const candidate of candidates) {
    if (batch.length >= Math.min(JOB_CONCURRENCY, room)) break;
    if (candidate.at.getTime() > first.at.getTime() + JOB_BATCH_WINDOW_MS) break;
    const subject = subjectOf(candidate.job);
    if (subjects.has(subject)) break;
    subjects.add(subject);
    batch.push(candidate);
  }
  return batch;
}

/**
 * Runs a job as its scheduler would. Another runner may hold the same job (its scheduler firing it
 * meanwhile): a job it holds is run again once it is done, which then finds nothing left to do; a
 * job it completed is reported as such. A job that fails stays with its scheduler, which retries it.
 */
async function runOne(job: ScheduledJob): Promise<string> {
  const name = jobName(job);
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await runJob(job);
      await forgetJob(name);
      return outcome;
    } catch (error) {
      const delay = BUSY_RETRY_DELAYS_MS[attempt];
      if (error instanceof BusyError && delay !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, delay));
        continue;
      }
      if (!(await isJobRecorded(name))) return "ran-elsewhere";
      logger.warn("A due job failed during a clock advance; its scheduler runs it again", {
        job: name,
        error,
      });
      return `failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
}
