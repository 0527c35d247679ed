import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import { TABLE } from "../db/table.ts";
import { conditionFailedItem } from "../db/transactions.ts";
import {
  captureScheduleName,
  dailyCloseScheduleName,
  parseJob,
  type ScheduledJob,
  type ScheduleRequest,
  subscriptionScheduleName,
} from "./port.ts";

/**
 * The record of every scheduled job in the table (`keys.scheduledJob`), whichever scheduler fires
 * it: found by its environment and business due time (`keys.environmentJob`) for a sandbox clock's
 * advance; and, when the local stack fires it, by the real time it fires (`keys.scheduledJobDue`).
 * A job's record is removed once the job ran (or was cancelled); a record left behind expires.
 */
const ENTITY = "scheduled-job";
/** Far beyond any job's retries: a record older than this is forgotten by DynamoDB's TTL. */
const KEEP_SECONDS = 90 * 24 * 3600;

export interface StoredJob {
  name: string;
  /** When it is due, in its environment's business time. */
  dueAt: string;
  /** When it fires (or fires next, after a failed run), in real time. */
  fireAt: string;
  attempts: number;
  /** When it first fired: retries stop `JOB_RETRY.maximumEventAgeSeconds` after it. */
  firstFireAt: string;
  job: ScheduledJob;
}

/** A job's name follows from the job: the same work is always the same schedule. */
export function jobName(job: ScheduledJob): string {
  if (job.kind === "capture-invoice") return captureScheduleName(job.invoiceId);
  if (job.kind === "daily-close") return dailyCloseScheduleName(job.scope, job.day);
  return subscriptionScheduleName(job);
}

/**
 * Records a job (idempotent: a record already there stays as it is). `firedLocally`: the local
 * stack's poller fires it (it is then also listed by fire time).
 */
export async function recordJob(
  request: ScheduleRequest,
  fireAt: Date,
  firedLocally: boolean,
): Promise<void> {
  const dueAt = request.at.toISOString();
  const fires = fireAt.toISOString();
  try {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: {
          ...keys.scheduledJob(request.name),
          ...keys.environmentJob(request.job.scope, dueAt, request.name),
          ...(firedLocally ? keys.scheduledJobDue("waiting", fires, request.name) : {}),
          type: ENTITY,
          name: request.name,
          due_at: dueAt,
          fire_at: fires,
          first_fire_at: fires,
          attempts: 0,
          job: request.job,
          expires_at: Math.floor(fireAt.getTime() / 1000) + KEEP_SECONDS,
        },
        ConditionExpression: "attribute_not_exists(pk)",
        ReturnValuesOnConditionCheckFailure: "NONE",
      }),
    );
  } catch (error) {
    // Already scheduled under this name: as EventBridge Scheduler's ConflictException.
    if (conditionFailedItem(error) === null) throw error;
  }
}

/** The job ran or was cancelled: its record goes. */
export async function forgetJob(name: string): Promise<void> {
  await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key: keys.scheduledJob(name) }));
}

export function storedJob(item: Record<string, unknown>): StoredJob {
  return {
    name: String(item.name),
    dueAt: String(item.due_at),
    fireAt: String(item.fire_at ?? item.due_at),
    attempts: Number(item.attempts),
    firstFireAt: String(item.first_fire_at ?? item.first_due_at ?? item.due_at),
    job: parseJob(item.job),
  };
}

/**
 * An environment's jobs due by `until` (business time), earliest first, at most `limit`: the second
 * access path is eventually consistent, so a job recorded an instant ago may show a moment later.
 */
export async function dueJobsOf(scope: Scope, until: Date, limit: number): Promise<StoredJob[]> {
  const index = TABLE.indexes.gsi2;
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      IndexName: index.name,
      KeyConditionExpression: "#pk = :pk AND #sk <= :upTo",
      ExpressionAttributeNames: { "#pk": index.partitionKey, "#sk": index.sortKey },
      ExpressionAttributeValues: {
        ":pk": keys.environmentJobsPartition(scope),
        // `#` sorts before every character of a name, `~` after: every job due up to `until`.
        ":upTo": `${until.toISOString()}#~`,
      },
      Limit: limit,
    }),
  );
  return Items.filter((item) => item.type === ENTITY).map(storedJob);
}

/** How many of an environment's jobs due by `until` there are, leaving out those in `excluding`. */
export async function countDueJobs(
  scope: Scope,
  until: Date,
  excluding: ReadonlySet<string>,
): Promise<number> {
  const index = TABLE.indexes.gsi2;
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk AND #sk <= :upTo",
        FilterExpression: "#type = :type",
        ProjectionExpression: "#name",
        ExpressionAttributeNames: {
          "#pk": index.partitionKey,
          "#sk": index.sortKey,
          "#type": "type",
          "#name": "name",
        },
        ExpressionAttributeValues: {
          ":pk": keys.environmentJobsPartition(scope),
          ":upTo": `${until.toISOString()}#~`,
          ":type": ENTITY,
        },
        ExclusiveStartKey: startKey,
      }),
    );
    count += (page.Items ?? []).filter((item) => !excluding.has(String(item.name))).length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

/** Whether a job is still recorded: a job that ran (or was cancelled) is forgotten. */
export async function isJobRecorded(name: string): Promise<boolean> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.scheduledJob(name),
      ProjectionExpression: "pk",
      ConsistentRead: true,
    }),
  );
  return Item !== undefined;
}
