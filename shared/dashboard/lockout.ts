import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { dashboardKeys, epochSeconds } from "./keys.ts";
import type { DashboardUser } from "./users.ts";

/**
 * Failed sign-ins (a wrong password, a wrong second factor) counted per person, and per email for
 * an email no person has, the same way: an answer never tells whether an email exists. The first
 * `FREE_FAILURES` cost nothing; then each attempt waits a growing delay (1 s, 2 s, 4 s, … 64 s),
 * answered 429 with Retry-After before any password is checked; from `LOCK_AFTER` failures on,
 * `LOCK_MS` per failure. A success clears the count. Counting is one atomic `ADD` on the item: two
 * failures at once both count.
 */
export const FREE_FAILURES = 3;
export const LOCK_AFTER = 10;
export const LOCK_MS = 15 * 60_000;

export interface FailureCount {
  failures?: number;
  last_failure_at?: string | null;
}

/** How long after the last failure the next attempt is heard (0: at once). */
export function delayAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  if (failures >= LOCK_AFTER) return LOCK_MS;
  return 1000 * 2 ** (failures - FREE_FAILURES);
}

/** A 429: the caller is told when it may try again (the `Retry-After` header). */
export class TooManyAttempts extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, "request.dashboard.too-many-attempts", message);
    this.name = "TooManyAttempts";
  }
}

/** Throws the 429 while the count says to wait. */
export function refuseWhileWaiting(count: FailureCount, now: Date): void {
  const failures = count.failures ?? 0;
  if (failures === 0 || !count.last_failure_at) return;
  const until = Date.parse(count.last_failure_at) + delayAfter(failures);
  if (until <= now.getTime()) return;
  const seconds = Math.ceil((until - now.getTime()) / 1000);
  throw new TooManyAttempts(
    failures >= LOCK_AFTER
      ? `Too many failed sign-ins: signing in is locked for ${seconds} seconds.`
      : `Too many failed sign-ins: try again in ${seconds} seconds.`,
    seconds,
  );
}

export async function unknownEmailCount(email: string): Promise<FailureCount> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: dashboardKeys.emailFailures(email),
      ConsistentRead: true,
    }),
  );
  return (Item ?? {}) as FailureCount;
}

async function countFailure(key: { pk: string; sk: string }, now: Date, extra: Record<string, unknown> = {}) {
  const names = Object.keys(extra);
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: key,
      UpdateExpression: `ADD failures :one SET last_failure_at = :now${names.map((name) => `, ${name} = :${name}`).join("")}`,
      ExpressionAttributeValues: {
        ":one": 1,
        ":now": now.toISOString(),
        ...Object.fromEntries(names.map((name) => [`:${name}`, extra[name]])),
      },
    }),
  );
}

export function userFailed(user: DashboardUser, now: Date) {
  return countFailure({ ...dashboardKeys.user(user.email) }, now);
}

export function unknownEmailFailed(email: string, now: Date) {
  // Kept a day (the table's TTL): long enough to hold any lock.
  return countFailure(dashboardKeys.emailFailures(email), now, {
    expires_at: epochSeconds(new Date(now.getTime() + 24 * 3600_000)),
  });
}

export async function userSucceeded(user: DashboardUser): Promise<void> {
  if (!user.failures) return;
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: dashboardKeys.user(user.email),
      UpdateExpression: "SET failures = :zero, last_failure_at = :none",
      ExpressionAttributeValues: { ":zero": 0, ":none": null },
    }),
  );
}
