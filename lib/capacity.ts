import type { IndexName } from "../shared/db/table.ts";

/**
 * What a stage is sized for. `peak` is one project at 5,000 requests per second of the load bench's
 * mix (README "Capacity at 5,000 requests per second" holds the arithmetic and the sources of every
 * quota below); `sandbox` is a developer's or a test stage, which must deploy next to others in an
 * account of default quotas and reserves nothing of it.
 *
 * `prod` is sized `peak`, any other stage `sandbox`; `cdk deploy -c capacity=peak` sizes another
 * stage (staging, before a merchant's sale) the same way.
 */
export type CapacityProfile = "peak" | "sandbox";

export interface Capacity {
  /**
   * The account's concurrent executions the stage is sized for (`-c accountConcurrency=…`
   * overrides it): a quota a stack cannot raise, which the concurrency alarm measures against.
   */
  accountConcurrency: number;
  /** The API stage's throttling (`-c rateLimit=… -c burstLimit=…` still override it). */
  api: { rateLimit: number; burstLimit: number };
  /**
   * Reserved concurrency by handler: the most of the account's concurrency the function may use
   * and, reserved for it, never taken by another. Background work is capped so that a burst of it
   * (a sale's webhooks, a day's due captures) cannot take the API's concurrency.
   */
  reservedConcurrency: Readonly<Record<string, number>>;
  /** A queue worker's event source `maxConcurrency` instead of the topology's (which the local pollers use). */
  maxConcurrency: Readonly<Record<string, number>>;
  /** Warm throughput of the table and of indexes, in units per second (pre-warmed for a peak). */
  warmThroughput: {
    table?: { readUnitsPerSecond?: number; writeUnitsPerSecond?: number };
    indexes?: Partial<Record<IndexName, { readUnitsPerSecond?: number; writeUnitsPerSecond?: number }>>;
  };
}

/** One project's peak the `peak` profile is sized for. */
export const PEAK_REQUESTS_PER_SECOND = 5_000;

/**
 * Measured by `LOAD_SECONDS=30 npx tsx bench/load.ts` (the mixed load, 1,105 requests): 682 events
 * (one webhook delivery each), 17.6 write units per request on the table and 4.3 on `gsi1`
 * (the per-key table's WCU/s summed by index, over 35.7 req/s; a lower bound: an item's KB, twice
 * in a transaction).
 */
export const MIX = {
  eventsPerRequest: 682 / 1_105,
  tableWriteUnitsPerRequest: 17.6,
  gsi1WriteUnitsPerRequest: 4.3,
} as const;

/**
 * A webhook worker's batch (10 messages, delivered concurrently: `shared/webhooks/batch.ts`) lasts
 * as long as its slowest receiver plus the worker's own table writes: sized for receivers that
 * answer within 500 ms at p99 (the delivery's own limit is 5 s, `DELIVERY_TIMEOUT_MS`).
 */
export const WEBHOOK_BATCH_SECONDS = 0.52;

export const CAPACITY: Readonly<Record<CapacityProfile, Capacity>> = {
  sandbox: {
    // Lambda's default quota.
    accountConcurrency: 1_000,
    api: { rateLimit: 100, burstLimit: 200 },
    reservedConcurrency: {},
    maxConcurrency: {},
    warmThroughput: {},
  },
  peak: {
    // What README "Capacity" asks for by a support request: 2,878 for the API at the bench's p99,
    // 418 reserved below, the stream consumers and Lambda's unreserved minimum of 100.
    accountConcurrency: 5_000,
    // One project's 5,000 req/s and the rest of the platform's traffic, within API Gateway's
    // account quota of 10,000 req/s; the burst is the account's bucket, 5,000.
    api: { rateLimit: 6_000, burstLimit: 5_000 },
    reservedConcurrency: {
      // 3,086 deliveries/s at 5,000 req/s (0.617 events per request); 200 batches of 10 in flight
      // deliver 200 × 10 / 0.52 s = 3,846 a second. Reserved = the event source's maximum
      // concurrency, as Lambda advises (more batches than reserved would be throttled).
      "webhooks/deliver": 200,
      "exports/run": 2,
      "exports/deliver": 4,
      // Due captures and renewals arrive at EventBridge Scheduler's pace (1,000 invocations/s by
      // default); 100 each at ~0.5 s a run is 200 captures and 200 renewals a second, the rest
      // waits in Lambda's asynchronous queue (retried for up to 6 hours) instead of taking the
      // API's concurrency.
      "jobs/capture-invoice": 100,
      "jobs/subscription": 100,
      // One run per environment and day (300 s at most).
      "jobs/daily-close": 10,
      // Every minute with a 55-second limit: at most two runs overlap.
      "jobs/recover-reservations": 2,
    },
    maxConcurrency: { "webhooks/deliver": 200 },
    warmThroughput: {
      // 5,000 × 17.6 = 88,000 write units/s are needed: 40,000 is the table-level quota of an
      // on-demand table by default, the most the stack can ask for until a support request raises
      // it (then 90,000 here). Reads are estimated, not measured (README): some 20,000/s.
      table: { readUnitsPerSecond: 24_000, writeUnitsPerSecond: 40_000 },
      // 5,000 × 4.3 = 21,500 write units/s on gsi1 (a new index starts at 4,000).
      indexes: { gsi1: { writeUnitsPerSecond: 25_000 } },
    },
  },
};

/** `prod` is sized for the peak; the context value `capacity` (`peak` or `sandbox`) overrides. */
export function capacityProfileOf(stage: string, requested: unknown): CapacityProfile {
  if (requested === undefined) return stage === "prod" ? "peak" : "sandbox";
  if (requested === "peak" || requested === "sandbox") return requested;
  throw new Error(`Context capacity must be "peak" or "sandbox", got ${JSON.stringify(requested)}`);
}
