import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { TABLE } from "../db/table.ts";
import { JOB_RETRY, type Scheduler } from "./port.ts";
import { forgetJob, recordJob, type StoredJob, storedJob } from "./records.ts";

/**
 * The scheduler port on the table, for the local stack (no emulator of EventBridge Scheduler exists):
 * a job is its record (`records.ts`), listed by the real time it fires, fired by the local stack's
 * poller (`lib/local/scheduler.ts`), which deletes it once it ran, on the condition that it is still
 * the job it ran. Being in the table, jobs survive a restart: one that fell due while the stack was
 * down fires at the next start. A failed run is retried with backoff per `JOB_RETRY`, then moved to
 * the dead partition (the dead-letter queue's counterpart) and logged.
 */
export const tableScheduler: Scheduler = {
  schedule: (request, fireAt) => recordJob(request, fireAt, true),
  cancel: forgetJob,
};

/** Jobs to fire at `now` (real time), oldest first (the index is eventually consistent). */
export async function dueJobs(now: Date, limit = 25): Promise<StoredJob[]> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      IndexName: TABLE.indexes.gsi1.name,
      KeyConditionExpression: "#pk = :pk AND #sk <= :upTo",
      ExpressionAttributeNames: { "#pk": "gsi1pk", "#sk": "gsi1sk" },
      ExpressionAttributeValues: {
        ":pk": keys.scheduledJobPartition("waiting"),
        // `#` sorts before every character of a name, `~` after: every job to fire up to `now`.
        ":upTo": `${now.toISOString()}#~`,
      },
      Limit: limit,
    }),
  );
  return Items.filter((item) => item.type === "scheduled-job").map(storedJob);
}

/** The job ran: it is deleted, unless it was cancelled or scheduled again meanwhile. */
export async function completeJob(job: StoredJob): Promise<void> {
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: keys.scheduledJob(job.name),
        ConditionExpression: "#fire = :fire AND #attempts = :attempts",
        ExpressionAttributeNames: { "#fire": "fire_at", "#attempts": "attempts" },
        ExpressionAttributeValues: { ":fire": job.fireAt, ":attempts": job.attempts },
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
  const ageSeconds = (now.getTime() - Date.parse(job.firstFireAt)) / 1000;
  const dead = attempts > JOB_RETRY.maximumAttempts || ageSeconds > JOB_RETRY.maximumEventAgeSeconds;
  const fireAt = dead ? job.fireAt : new Date(now.getTime() + retryDelayMs(job.attempts)).toISOString();
  const index = keys.scheduledJobDue(dead ? "dead" : "waiting", fireAt, job.name);
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.scheduledJob(job.name),
        UpdateExpression: "SET #fire = :next, #attempts = :attempts, #gpk = :gpk, #gsk = :gsk",
        ConditionExpression: "#fire = :fire AND #attempts = :previous",
        ExpressionAttributeNames: {
          "#fire": "fire_at",
          "#attempts": "attempts",
          "#gpk": "gsi1pk",
          "#gsk": "gsi1sk",
        },
        ExpressionAttributeValues: {
          ":next": fireAt,
          ":attempts": attempts,
          ":gpk": index.gsi1pk,
          ":gsk": index.gsi1sk,
          ":fire": job.fireAt,
          ":previous": job.attempts,
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  return dead ? "dead" : "retry";
}
