import { type AttributeValue, QueryCommand, type QueryCommandOutput } from "@aws-sdk/client-dynamodb";
import { nowIn } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, STATISTICS_SHARDS } from "../db/keys.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField } from "../http/errors.ts";
import { addAmounts, currencyDigits } from "../money.ts";
import { parseTimestamp } from "../validation/fields.ts";
import { type CountedOutcome, dayOf, hourOf } from "./counts.ts";

export type Interval = "hour" | "day";

/** The longest range each interval may span: 745 hourly buckets at most, 367 daily ones. */
export const MAX_SPAN_DAYS: Readonly<Record<Interval, number>> = { hour: 31, day: 366 };
/** The range read when none is named: the last day by hour, the last 30 days by day. */
const DEFAULT_SPAN_DAYS: Readonly<Record<Interval, number>> = { hour: 1, day: 30 };
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface Bucket {
  start: string;
  attempts: number;
  approved: number;
  declined: number;
  failed: number;
  /** Approved amounts by currency, exact decimal strings with the currency's decimals. */
  amounts: Record<string, string>;
}

export interface Statistics {
  interval: Interval;
  from: string;
  to: string;
  series: { gateway_configuration_id: string; buckets: Bucket[] }[];
}

interface Range {
  interval: Interval;
  /** The first bucket's start (`from` rounded down to its interval). */
  from: Date;
  /** The range's end, exclusive. */
  to: Date;
}

/**
 * `GET /statistics`: the environment's authorization attempts (approved, declined, failed) and
 * approved amounts, by gateway configuration, in hourly or daily buckets (UTC) of `[from, to)`.
 * Counted as the attempts settle (`counts.ts`), by hour and by day; a bucket is counted whole (the
 * last one up to its end). Every shard is queried at once: one round trip (more only past a 1 MB
 * page).
 */
export async function statisticsOf(caller: Caller, query: Record<string, unknown>): Promise<Statistics> {
  const range = rangeOf(query, nowIn(caller.environment));
  // Hourly: the hour items; daily: the day items (written beside them), never the hours.
  const daily = range.interval === "day";
  const startOf = daily ? dayOf : hourOf;
  const first = startOf(range.from.toISOString());
  const last = startOf(new Date(range.to.getTime() - 1).toISOString());
  const items = (
    await Promise.all(
      Array.from({ length: STATISTICS_SHARDS }, (_, shard) =>
        shardItems(
          daily
            ? keys.statisticsDayShard(caller.projectId, shard)
            : keys.statisticsShard(caller.projectId, shard),
          first,
          last,
        ),
      ),
    )
  ).flat();
  return {
    interval: range.interval,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    series: seriesOf(range, items),
  };
}

/** The range a request names, checked: a 400 naming the field that is wrong. */
export function rangeOf(query: Record<string, unknown>, now: Date): Range {
  const interval = query.interval ?? "hour";
  if (interval !== "hour" && interval !== "day") throw invalidField("interval", "must be hour or day");
  const to = query.to === undefined ? now : timestampField("to", query.to);
  const from =
    query.from === undefined
      ? new Date(to.getTime() - DEFAULT_SPAN_DAYS[interval] * DAY_MS)
      : timestampField("from", query.from);
  if (from.getTime() >= to.getTime()) throw invalidField("from", "must be before to");
  const start = new Date(Math.floor(from.getTime() / unitOf(interval)) * unitOf(interval));
  if (to.getTime() - from.getTime() > MAX_SPAN_DAYS[interval] * DAY_MS)
    throw invalidField(
      "to",
      `must be at most ${MAX_SPAN_DAYS[interval]} days after from for ${interval === "hour" ? "hourly" : "daily"} buckets`,
    );
  return { interval, from: start, to };
}

function timestampField(name: string, value: unknown): Date {
  const parsed = typeof value === "string" ? parseTimestamp(value) : undefined;
  if (!parsed) throw invalidField(name, "must be a date and time in ISO 8601 format");
  return parsed;
}

function unitOf(interval: Interval): number {
  return interval === "hour" ? HOUR_MS : DAY_MS;
}

type RawItem = Record<string, AttributeValue>;

/**
 * A shard's items of the hours (or days) `[first, last]`. Read with the plain client so that numbers
 * stay the exact decimal strings DynamoDB keeps (amounts may pass 2^53 in minor units).
 */
async function shardItems(pk: string, first: string, last: string): Promise<RawItem[]> {
  const found: RawItem[] = [];
  let start: RawItem | undefined;
  do {
    const page: QueryCommandOutput = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :first AND :last",
        ExpressionAttributeValues: {
          ":pk": { S: pk },
          ":first": { S: first },
          // After every `{hour or day}#{configuration id}` of the last one.
          ":last": { S: `${last}#~` },
        },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }) as never,
    );
    found.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

const OUTCOMES: readonly CountedOutcome[] = ["approved", "declined", "failed"];
const AMOUNT = /^amount_([A-Z]{3})$/;

/** Every bucket of the range for each configuration with attempts in it, the shards' items summed. */
function seriesOf(range: Range, items: RawItem[]): Statistics["series"] {
  const unit = unitOf(range.interval);
  const starts: string[] = [];
  for (let at = range.from.getTime(); at < range.to.getTime(); at += unit)
    starts.push(new Date(at).toISOString());
  const sums = new Map<
    string,
    Map<string, { counts: Record<string, number>; amounts: Record<string, string[]> }>
  >();
  for (const item of items) {
    const configuration = item.gateway_configuration_id?.S;
    const hour = item.hour?.S;
    const day = item.day?.S;
    if (!configuration || (!hour && !day)) continue;
    const at = Date.parse(hour ? `${hour}:00:00.000Z` : `${day}T00:00:00.000Z`);
    if (at < range.from.getTime() || at >= range.to.getTime()) continue;
    const start = new Date(Math.floor(at / unit) * unit).toISOString();
    const buckets = sums.get(configuration) ?? new Map();
    sums.set(configuration, buckets);
    const sum = buckets.get(start) ?? { counts: {}, amounts: {} };
    buckets.set(start, sum);
    for (const [name, value] of Object.entries(item)) {
      if (value.N === undefined) continue;
      const currency = AMOUNT.exec(name)?.[1];
      if (currency) sum.amounts[currency] = [...(sum.amounts[currency] ?? []), value.N];
      else sum.counts[name] = (sum.counts[name] ?? 0) + Number(value.N);
    }
  }
  return [...sums.keys()].sort().map((configuration) => ({
    gateway_configuration_id: configuration,
    buckets: starts.map((start) => {
      const sum = sums.get(configuration)?.get(start);
      const counts = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, sum?.counts[outcome] ?? 0]));
      return {
        start,
        attempts: sum?.counts.attempts ?? 0,
        approved: counts.approved ?? 0,
        declined: counts.declined ?? 0,
        failed: counts.failed ?? 0,
        amounts: Object.fromEntries(
          Object.entries(sum?.amounts ?? {})
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([currency, amounts]) => [currency, withDecimals(addAmounts(...amounts), currency)]),
        ),
      };
    }),
  }));
}

/** An exact sum written with its currency's decimals ("30.5" USD → "30.50"). */
function withDecimals(sum: string, currency: string): string {
  const digits = currencyDigits(currency) ?? 2;
  const [whole = "0", fraction = ""] = sum.split(".");
  return digits === 0 ? whole : `${whole}.${fraction.padEnd(digits, "0")}`;
}
