/**
 * `npx tsx bench/partition-limits.ts`: the load bench alone on a local stack of its own, as
 * `npx tsx bench/load.ts` runs it (same `LOAD_SECONDS`, `LOAD_CONCURRENCY`, `LOAD_DRAIN_SECONDS`),
 * then per kind of partition key the request rate of one project at which it would reach
 * DynamoDB's 1,000 WCU/s or 3,000 RCU/s, against issue 23's target of 5,000 req/s
 * (`formatPartitionLimits`). Exits 1 as the load does (errors, events not delivered) and when a
 * key of the project is below the target.
 */
import { pathToFileURL } from "node:url";
import { benchLoad, DEFAULT_CONCURRENCY, formatLoad } from "./load.ts";
import {
  formatPartitionLimits,
  lastPartitionReads,
  partitionLimits,
  TARGET_REQUESTS_PER_SECOND,
} from "./partition-writes.ts";

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { existsSync } = await import("node:fs");
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { startDynamoDbLocal } = await import("../lib/local/dynamodb-local.ts");
  const { startLocalStack } = await import("../lib/local/start.ts");
  const dataDir = await mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "payment-api-load-"));
  const dynamodbLocal = await startDynamoDbLocal();
  try {
    const stack = await startLocalStack({
      port: 0,
      dataDir,
      dynamodbEndpoint: dynamodbLocal.endpoint,
      log: () => {},
    });
    try {
      const { dynamo } = await import("../shared/db/client.ts");
      const figures = await benchLoad({
        apiUrl: stack.url,
        credentials: stack.credentials.sandbox,
        dynamo,
        seconds: Number(process.env.LOAD_SECONDS ?? 60),
        concurrency: Number(process.env.LOAD_CONCURRENCY ?? DEFAULT_CONCURRENCY),
        drainSeconds: Number(process.env.LOAD_DRAIN_SECONDS ?? 120),
      });
      console.log(`\n${formatLoad(figures)}`);
      console.log(`\n${formatPartitionLimits(figures.partitions, lastPartitionReads(), figures.requests)}`);
      const { webhooks } = figures;
      const allDelivered = webhooks.delivered === webhooks.events && webhooks.counted === webhooks.events;
      const below = partitionLimits(figures.partitions, lastPartitionReads(), figures.requests).filter(
        (row) => row.limitAt < TARGET_REQUESTS_PER_SECOND && !row.perResource,
      );
      if (figures.errors > 0 || !allDelivered || webhooks.badSignatures > 0 || below.length > 0)
        process.exitCode = 1;
    } finally {
      await stack.stop();
    }
  } finally {
    await dynamodbLocal.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
