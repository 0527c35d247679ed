import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { TABLE } from "../db/table.ts";
import { JOB_RETRY, parseJob, type ScheduledJob, type Scheduler } from "./port.ts";

/**
 * The scheduler port on the table, for the local stack (no emulator of EventBridge Scheduler exists):
 * a job is one item (`keys.scheduledJob`), listed by due time in the listing index
 * (`keys.scheduledJobDue`), fired by the local stack's poller (`lib/local/scheduler.ts`), which
 * deletes it once it ran, on the condition that it is still the job it ran (not one scheduled again
 * meanwhile). Being in the table, jobs survive a restart: one that fell due while the stack was down
 * fires at the next start. A failed run is retried with backoff per `JOB_RETRY`, then moved to the
 * dead partition (the dead-letter queue's counterpart) and logged.
 */
const ENTITY = "scheduled-job";

export interface StoredJob {
  name: string;
  dueAt: string;
  attempts: number;
  /** When the job first fell due: retries stop `JOB_RETRY.maximumEventAgeSeconds` after it. */
  firstDueAt: string;
  job: ScheduledJob;
}

export const tableScheduler: Scheduler = {
  async schedule({ name, at, job }) {
    const dueAt = at.toISOString();
    try {
      await dynamo.send(
        new PutCommand({
          TableName: config.tableName,
          Item: {
            ...keys.scheduledJob(name),
            ...keys.scheduledJobDue("waiting", dueAt, name),
            type: ENTITY,
            name,
            due_at: dueAt,
            first_due_at: dueAt,
            attempts: 0,
            job,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
    } catch (error) {
      // Already scheduled under this name: as EventBridge Scheduler's ConflictException.
      if (error instanceof ConditionalCheckFailedException) return;
      throw error;
    }
  },
  async cancel(name) {
    await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key: keys.scheduledJob(name) }));
  },
};

/** Jobs due at `now`, oldest first (the index is eventually consistent: a new job may show late). */
export async function dueJobs(now: Date, limit = 25): Promise<StoredJob[]> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      IndexName: TABLE.indexes.gsi1.name,
      KeyConditionExpression: "#pk = :pk AND #sk <= :upTo",
      ExpressionAttributeNames: { "#pk": "gsi1pk", "#sk": "gsi1sk" },
      ExpressionAttributeValues: {
        ":pk": keys.scheduledJobPartition("waiting"),
        // `#` sorts before every character of a name, `~` after: every job due up to `now`.
        ":upTo": `${now.toISOString()}#~`,
      },
      Limit: limit,
    }),
  );
  return Items.filter((item) => item.type === ENTITY).map((item) => ({
    name: String(item.name),
    dueAt: String(item.due_at),
    attempts: Number(item.attempts),
    firstDueAt: String(item.first_due_at),
    job: parseJob(item.job),
  }));
}

/** The job ran: it is deleted, unless it was cancelled or scheduled again meanwhile. */
export async function completeJob(job: StoredJob): Promise<void> {
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: keys.scheduledJob(job.name),
        ConditionExpression: "#due = :due AND #attempts = :attempts",
        ExpressionAttributeNames: { "#due": "due_at", "#attempts": "attempts" },
        ExpressionAttributeValues: { ":due": job.dueAt, ":attempts": job.attempts },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return;
    throw error;
  }
}

/** Delay before the next attempt: 1 s, doubling, at most 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(1000 * 2 ** attempts, 5 * 60 * 1000);
}

/**
 * The job failed: it waits for its next attempt, or, out of attempts or too old, moves to the dead
 * partition. Returns which.
 */
export async function failJob(job: StoredJob, now: Date): Promise<"retry" | "dead"> {
  const attempts = job.attempts + 1;
  const ageSeconds = (now.getTime() - Date.parse(job.firstDueAt)) / 1000;
  const dead = attempts > JOB_RETRY.maximumAttempts || ageSeconds > JOB_RETRY.maximumEventAgeSeconds;
  const dueAt = dead ? job.dueAt : new Date(now.getTime() + retryDelayMs(job.attempts)).toISOString();
  const index = keys.scheduledJobDue(dead ? "dead" : "waiting", dueAt, job.name);
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.scheduledJob(job.name),
        UpdateExpression: "SET #due = :next, #attempts = :attempts, #gpk = :gpk, #gsk = :gsk",
        ConditionExpression: "#due = :due AND #attempts = :previous",
        ExpressionAttributeNames: {
          "#due": "due_at",
          "#attempts": "attempts",
          "#gpk": "gsi1pk",
          "#gsk": "gsi1sk",
        },
        ExpressionAttributeValues: {
          ":next": dueAt,
          ":attempts": attempts,
          ":gpk": index.gsi1pk,
          ":gsk": index.gsi1sk,
          ":due": job.dueAt,
          ":previous": job.attempts,
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  return dead ? "dead" : "retry";
}
