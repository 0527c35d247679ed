import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { batchGet } from "../db/batch.ts";
import { dynamo } from "../db/client.ts";
import type { ItemKey } from "../db/keys.ts";
import { TABLE } from "../db/table.ts";
import { logger } from "../observability/logger.ts";

/**
 * A circuit breaker per gateway configuration, shared by every Lambda container through the table.
 *
 * Each provider call's health (answered, or failed: unreachable, a fault, no answer) is counted in
 * 10-second buckets (`ADD`: a failure at once, answers together at most once a second per
 * container, over four shards, each its own partition key, so that no partition takes a peak's
 * every write). The breaker **opens** when, over the last 30 seconds since it last closed,
 * at least 5 calls were made and half or more failed; routing then skips the configuration. After
 * `BREAKER_OPEN_MS` (30 s) it is **half-open**: one payment at a time may go through it as a probe
 * (claimed by a conditional write, for 10 s); the probe's success closes it, its failure opens it
 * again. A decline is an answer: only faults count against a provider.
 *
 * Routing reads the states from this container's cache (refreshed at most once a second, one
 * `BatchGetItem` for the environment's card configurations), so a payment pays no round trip for
 * it; the container's own outcomes update its cache at once. Times are real time (`clock.now()`),
 * not a sandbox's business time.
 */
export const BUCKET_MS = 10_000;
const WINDOW_BUCKETS = 3;
const SHARDS = 4;
export const MIN_CALLS = 5;
export const FAILURE_RATE = 0.5;
/** How long an open breaker skips its configuration before a probe; `BREAKER_OPEN_MS` for a test of the local stack. */
export const OPEN_MS = durationSetting(process.env.BREAKER_OPEN_MS, 30_000);
const PROBE_LEASE_MS = 10_000;
const CACHE_MS = 1_000;
const KEEP_SECONDS = 3600;

function durationSetting(configured: string | undefined, fallback: number): number {
  const value = Number(configured);
  return configured && Number.isInteger(value) && value >= 1_000 ? value : fallback;
}

export type BreakerState = "closed" | "open" | "half-open";

export interface Health {
  state: BreakerState;
  /** Calls and failures in the window (since the breaker last closed). */
  calls: number;
  failures: number;
  opened_at: string | null;
  /** Half-open: a probe holds the configuration until then (epoch ms); 0 when none does. */
  probeUntil: number;
}

interface Counted {
  buckets: Map<number, { ok: number; failed: number }>;
  openedAt: number | null;
  closedAt: number;
  probeUntil: number;
}

/**
 * Per container, per list of configurations: the counts as last read, when, and the read under way.
 * A payment never waits for a refresh once a first read is there: a view older than `CACHE_MS` is
 * used as it is while a read in the background replaces it.
 */
interface CachedCounts {
  ids: readonly string[];
  counts: Map<string, Counted> | undefined;
  readAt: number;
  reading: Promise<Map<string, Counted>> | undefined;
}

const cache = new Map<string, CachedCounts>();

/** Each shard is a partition key of its own: a peak's counts spread over four partitions. */
const bucketKey = (configurationId: string, bucket: number, shard: number): ItemKey => ({
  pk: `health#${configurationId}#${shard}`,
  sk: `b#${bucket}`,
});
const stateKey = (configurationId: string): ItemKey => ({ pk: `health#${configurationId}`, sk: "state" });
/** The configuration an item of the breakers counts for (`health#<id>` or `health#<id>#<shard>`). */
const configurationOf = (item: Record<string, unknown>) => String(item.pk).split("#")[1] ?? "";
const bucketOf = (ms: number) => Math.floor(ms / BUCKET_MS);

function windowBuckets(now: number): number[] {
  const current = bucketOf(now);
  return Array.from({ length: WINDOW_BUCKETS }, (_, i) => current - i);
}

async function readCounts(ids: readonly string[]): Promise<Map<string, Counted>> {
  const now = clock.now().getTime();
  const buckets = windowBuckets(now);
  const keys = ids.flatMap((id) => [
    stateKey(id),
    ...buckets.flatMap((bucket) =>
      Array.from({ length: SHARDS }, (_, shard) => bucketKey(id, bucket, shard)),
    ),
  ]);
  const items = keys.length > 0 ? await batchGet(keys) : [];
  const counted = new Map<string, Counted>(
    ids.map((id) => [id, { buckets: new Map(), openedAt: null, closedAt: 0, probeUntil: 0 }]),
  );
  for (const item of items) {
    const entry = counted.get(configurationOf(item));
    if (!entry) continue;
    if (item.sk === "state") {
      entry.openedAt = typeof item.opened_at === "number" ? item.opened_at : null;
      entry.closedAt = Number(item.closed_at ?? 0);
      entry.probeUntil = Number(item.probe_until ?? 0);
      continue;
    }
    const bucket = Number(String(item.sk).slice("b#".length));
    const sum = entry.buckets.get(bucket) ?? { ok: 0, failed: 0 };
    sum.ok += Number(item.ok ?? 0);
    sum.failed += Number(item.failed ?? 0);
    entry.buckets.set(bucket, sum);
  }
  return counted;
}

function healthOf(entry: Counted, now: number): Health {
  let calls = 0;
  let failures = 0;
  for (const bucket of windowBuckets(now)) {
    // Buckets from before the breaker last closed are what opened it: not counted again.
    if (bucket * BUCKET_MS < entry.closedAt) continue;
    const sum = entry.buckets.get(bucket);
    if (!sum) continue;
    calls += sum.ok + sum.failed;
    failures += sum.failed;
  }
  const state: BreakerState =
    entry.openedAt === null ? "closed" : now < entry.openedAt + OPEN_MS ? "open" : "half-open";
  return {
    state,
    calls,
    failures,
    opened_at: entry.openedAt === null ? null : new Date(entry.openedAt).toISOString(),
    probeUntil: entry.probeUntil,
  };
}

function refresh(entry: CachedCounts, ids: readonly string[]): Promise<Map<string, Counted>> {
  if (entry.reading) return entry.reading;
  const reading = readCounts(ids);
  entry.reading = reading;
  reading
    .then((counts) => {
      entry.counts = counts;
      entry.readAt = Date.now();
    })
    .catch((error) => logger.warn("Reading the circuit breakers failed", { error }))
    .finally(() => {
      entry.reading = undefined;
    });
  return reading;
}

/**
 * The counts as this container last read them: a payment waits for a read only when there is none
 * yet (a container's first payment). A stale view is refreshed beside a call's health count
 * (`recordHealth`), which runs beside the payment's settlement: never a round trip of its own.
 */
async function cached(ids: readonly string[]): Promise<Map<string, Counted>> {
  const key = [...ids].sort().join(",");
  const entry = cache.get(key) ?? { counts: undefined, readAt: 0, reading: undefined, ids };
  cache.set(key, entry);
  return entry.counts ?? refresh(entry, ids);
}

/** The breakers of these configurations, as this container last read them (refreshed once a second). */
export async function breakers(ids: readonly string[]): Promise<Map<string, Health>> {
  const counted = await cached(ids);
  const now = clock.now().getTime();
  return new Map([...counted].map(([id, entry]) => [id, healthOf(entry, now)]));
}

/** This container's view of one configuration, in every cached read that holds it. */
function locally(configurationId: string, change: (entry: Counted) => void): void {
  for (const entry of cache.values()) {
    const counted = entry.counts?.get(configurationId);
    if (counted) change(counted);
  }
}

/**
 * Claims the half-open breaker's probe: true when this payment is the one that may try the
 * configuration now (one conditional write; false when another payment holds the probe).
 */
export async function claimProbe(configurationId: string, health: Health): Promise<boolean> {
  const now = clock.now().getTime();
  if (health.state !== "half-open" || health.probeUntil > now) return false;
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: stateKey(configurationId),
        UpdateExpression: "SET probe_until = :until",
        ConditionExpression:
          "opened_at = :opened AND (attribute_not_exists(probe_until) OR probe_until < :now)",
        ExpressionAttributeValues: {
          ":until": now + PROBE_LEASE_MS,
          ":opened": Date.parse(health.opened_at ?? ""),
          ":now": now,
        },
      }),
    );
    locally(configurationId, (entry) => {
      entry.probeUntil = now + PROBE_LEASE_MS;
    });
    return true;
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") return false;
    throw error;
  }
}

/** Answers a container counted and has not written yet, per configuration (failures go at once). */
const unwritten = new Map<string, { ok: number; failed: number; since: number }>();
/** How long a container keeps answers before writing them: one write a second under load. */
const FLUSH_MS = 1_000;

/**
 * Counts a provider call's health (`ok`: the provider answered, approving or declining), and moves
 * the breaker: a probe's outcome closes or reopens it; a failure that brings the window over the
 * threshold opens it. Answers are written together, at most once a second per configuration and
 * container (with the next call after that second); a failure or a probe is written at once, with
 * the answers kept so far. A container that ends keeps its last second of answers unwritten: the
 * other containers may then see a failure rate that much higher.
 */
export async function recordHealth(
  configurationId: string,
  ok: boolean,
  options: { probe: boolean },
): Promise<void> {
  const now = clock.now().getTime();
  const bucket = bucketOf(now);
  const field = ok ? "ok" : "failed";
  locally(configurationId, (entry) => {
    const sum = entry.buckets.get(bucket) ?? { ok: 0, failed: 0 };
    sum[field] += 1;
    entry.buckets.set(bucket, sum);
  });
  const counts = unwritten.get(configurationId) ?? { ok: 0, failed: 0, since: now };
  counts[field] += 1;
  unwritten.set(configurationId, counts);
  if (ok && !options.probe && now - counts.since < FLUSH_MS) return;
  unwritten.delete(configurationId);
  // A view of this configuration older than a second is read again, beside the count.
  const refreshing: Promise<unknown>[] = [];
  for (const entry of cache.values()) {
    if (entry.counts?.has(configurationId) && Date.now() - entry.readAt >= CACHE_MS) {
      refreshing.push(refresh(entry, entry.ids).catch(() => undefined));
    }
  }
  const counting = dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: bucketKey(configurationId, bucket, Math.floor(Math.random() * SHARDS)),
      UpdateExpression: "ADD #ok :ok, #failed :failed SET #expires = :expires",
      ExpressionAttributeNames: { "#ok": "ok", "#failed": "failed", "#expires": TABLE.ttlAttribute },
      ExpressionAttributeValues: {
        ":ok": counts.ok,
        ":failed": counts.failed,
        ":expires": Math.floor(now / 1000) + KEEP_SECONDS,
      },
    }),
  );
  if (options.probe) {
    await Promise.all([
      counting,
      ...refreshing,
      ok ? close(configurationId, now) : open(configurationId, now, true),
    ]);
    return;
  }
  await Promise.all([counting, ...refreshing]);
  if (ok) return;
  const view = viewOf(configurationId, now);
  if (
    view &&
    view.state === "closed" &&
    view.calls >= MIN_CALLS &&
    view.failures / view.calls >= FAILURE_RATE
  ) {
    await open(configurationId, now, false);
  }
}

/** This container's view of one configuration's breaker, its own counts included; undefined before any read. */
function viewOf(configurationId: string, now: number): Health | undefined {
  for (const entry of cache.values()) {
    const counted = entry.counts?.get(configurationId);
    if (counted) return healthOf(counted, now);
  }
  return undefined;
}

async function open(configurationId: string, now: number, reopen: boolean): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: stateKey(configurationId),
        UpdateExpression: "SET opened_at = :now, probe_until = :zero",
        ...(reopen ? {} : { ConditionExpression: "attribute_not_exists(opened_at)" }),
        ExpressionAttributeValues: { ":now": now, ":zero": 0 },
      }),
    );
    logger.warn("Circuit breaker opened", { gateway_configuration_id: configurationId, reopen });
    locally(configurationId, (entry) => {
      entry.openedAt = now;
      entry.probeUntil = 0;
    });
  } catch (error) {
    if ((error as Error).name !== "ConditionalCheckFailedException") throw error;
    // Another container opened it first: this one reads it on its next refresh.
  }
}

async function close(configurationId: string, now: number): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: stateKey(configurationId),
      UpdateExpression: "SET closed_at = :now REMOVE opened_at, probe_until",
      ExpressionAttributeValues: { ":now": now },
    }),
  );
  logger.info("Circuit breaker closed after a successful probe", {
    gateway_configuration_id: configurationId,
  });
  forget(configurationId);
}

/** The breaker moved: this container reads it again on its next payment. */
function forget(configurationId: string): void {
  for (const key of cache.keys()) if (key.split(",").includes(configurationId)) cache.delete(key);
}
