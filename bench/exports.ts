/**
 * Memory of an export as it grows (`tsx bench/exports.ts`, not part of `npm run bench` nor the
 * tests): seeds an environment with N transactions (BatchWriteItem, the item shape the payments
 * store writes), runs its export into a folder, and samples `process.memoryUsage()` every 20 ms
 * during the run. Done for 10,000 then 100,000 transactions in one process (each after a GC): an
 * export that streams keeps the same peak whatever N; one that held the rows would grow about ten
 * times. `BENCH_EXPORT_SIZES=10000,100000` chooses the sizes.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { startDynamoDbLocal } from "../lib/local/dynamodb-local.ts";
import { useLocalTable } from "../lib/local/stack-file.ts";
import { ensureTable } from "../lib/local/table.ts";
import { formatTable } from "./stats.ts";

const SIZES = (process.env.BENCH_EXPORT_SIZES ?? "10000,100000").split(",").map(Number);
const SAMPLE_MS = 20;
const WRITERS = 8;
const MB = 1024 * 1024;

const dynamodb = await startDynamoDbLocal();
const tableName = "payment-api-bench-exports";
useLocalTable(tableName, dynamodb.endpoint);
await ensureTable(new DynamoDBClient({ endpoint: dynamodb.endpoint }), tableName);
const exportsDir = await mkdtemp(join(tmpdir(), "payment-api-bench-exports-"));
process.env.EXPORTS_DIR = exportsDir;
process.env.LOG_LEVEL = "WARN";

// Imported after the environment names the table and the folder.
const { BatchWriteCommand } = await import("@aws-sdk/lib-dynamodb");
const { dynamo } = await import("../shared/db/client.ts");
const { keys } = await import("../shared/db/keys.ts");
const { newId, ID_PREFIXES } = await import("../shared/ids.ts");
const { conditionAttributes } = await import("../shared/payments/transaction.ts");
const { runExport } = await import("../shared/exports/run.ts");
const { insertExport } = await import("../shared/exports/export-store.ts");
const { builtInConfiguration } = await import("../shared/exports/layout.ts");
const { exportFileName } = await import("../shared/exports/export.ts");
type TransactionRecord = import("../shared/payments/transaction.ts").TransactionRecord;

/** A captured card payment as the payments store writes it (`shared/payments/store.ts`). */
function transactionItem(scope: string, index: number, at: string) {
  const id = newId("transaction");
  const amount = `${10 + (index % 990)}.${String(index % 100).padStart(2, "0")}`;
  const record: TransactionRecord = {
    id,
    project_id: scope,
    invoice_id: `${ID_PREFIXES.invoice}${id.slice(-26)}`,
    customer_id: null,
    subscription_id: null,
    token_id: null,
    card_id: newId("card"),
    gateway_configuration_id: newId("gatewayConfiguration"),
    gateway_name: "sandbox",
    name: `Order ${index}`,
    amount,
    currency: "EUR",
    authorized_amount: amount,
    captured_amount: amount,
    refunded_amount: "0.00",
    voided_amount: "0.00",
    status: "completed",
    chargedback: false,
    three_d_s_status: "not-applicable" as TransactionRecord["three_d_s_status"],
    error_code: null,
    error_message: null,
    incremental: false,
    auto_capture_at: null,
    gateway_reference: `sandbox_${index}`,
    authorized_at: at,
    operations: [
      {
        id: newId("operation"),
        type: "authorization",
        amount,
        success: true,
        error_code: null,
        created_at: at,
      },
      { id: newId("operation"), type: "capture", amount, success: true, error_code: null, created_at: at },
    ] as TransactionRecord["operations"],
    refunds: [],
    authentication: null,
    pending: null,
    metadata: { order: String(index) },
    sandbox: true,
    created_at: at,
  };
  return {
    ...keys.resource(scope, id),
    ...keys.listing(scope, "transaction", id),
    type: "transaction",
    version: 2,
    ...conditionAttributes(record),
    ...record,
  };
}

async function seed(scope: string, count: number): Promise<void> {
  let next = 0;
  const writer = async () => {
    while (next < count) {
      const start = next;
      next = Math.min(count, next + 25);
      const at = new Date().toISOString();
      let requests = Array.from({ length: next - start }, (_, offset) => ({
        PutRequest: { Item: transactionItem(scope, start + offset, at) },
      }));
      while (requests.length > 0) {
        const { UnprocessedItems } = await dynamo.send(
          new BatchWriteCommand({ RequestItems: { [tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
}

interface Measured {
  rows: number;
  seconds: number;
  bytes: number;
  peakRss: number;
  peakHeap: number;
  baseRss: number;
  baseHeap: number;
}

async function measure(count: number): Promise<Measured> {
  const scope = `test-${newId("project")}`;
  const from = new Date(Date.now() - 60_000).toISOString();
  process.stdout.write(`seeding ${count} transactions… `);
  const seeded = Date.now();
  await seed(scope, count);
  process.stdout.write(`${((Date.now() - seeded) / 1000).toFixed(0)} s; exporting… `);
  const to = new Date(Date.now() + 60_000).toISOString();
  const id = newId("export");
  await insertExport({
    id,
    project_id: scope,
    type: "transactions",
    layout_id: null,
    configuration: builtInConfiguration("transactions"),
    from,
    to,
    clock_offset_ms: 0,
    origin: "request",
    status: "pending",
    rows: null,
    size: null,
    file_name: exportFileName(id, "transactions", from, to),
    location: null,
    error: null,
    delivery: null,
    lease_until: null,
    sandbox: true,
    created_at: new Date().toISOString(),
    completed_at: null,
  });

  globalThis.gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, SAMPLE_MS);
  const started = Date.now();
  const outcome = await runExport(scope, id);
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  if (outcome.kind !== "completed")
    throw new Error(`The export of ${count} did not complete: ${outcome.kind}`);
  const bytes = (await stat(outcome.record.location ?? "")).size;
  console.log(`${outcome.record.rows} rows in ${seconds.toFixed(1)} s`);
  return {
    rows: outcome.record.rows ?? 0,
    seconds,
    bytes,
    peakRss,
    peakHeap,
    baseRss: base.rss,
    baseHeap: base.heapUsed,
  };
}

try {
  const results: Measured[] = [];
  for (const size of SIZES) results.push(await measure(size));
  const first = results[0] as Measured;
  console.log(
    `Export of N transactions (CSV, built-in layout, ${SAMPLE_MS} ms samples of process.memoryUsage(), node ${process.version}${globalThis.gc ? ", GC before each" : ""})`,
  );
  console.log(
    formatTable(
      [
        "rows",
        "seconds",
        "file MB",
        "peak RSS MB",
        "RSS growth MB",
        "peak heap MB",
        "heap growth MB",
        "peak heap vs first",
      ],
      results.map((result) => [
        String(result.rows),
        result.seconds.toFixed(1),
        (result.bytes / MB).toFixed(1),
        (result.peakRss / MB).toFixed(0),
        ((result.peakRss - result.baseRss) / MB).toFixed(0),
        (result.peakHeap / MB).toFixed(0),
        ((result.peakHeap - result.baseHeap) / MB).toFixed(0),
        `${(result.peakHeap / first.peakHeap).toFixed(2)}x`,
      ]),
    ),
  );
} finally {
  await rm(exportsDir, { recursive: true, force: true });
  await dynamodb.stop();
}
