/**
 * Times GET /statistics on a worst-case environment (every hour of 31 days filled on all 16 shards for
 * two configurations; with STATISTICS_YEAR=1 also every day of a year): the figures of the README's
 * statistics section. Not part of `npm test`: `npx vitest run -c bench/vitest/vitest.config.ts`.
 */
import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../../test/e2e/harness.ts";

const local = useInProcessApi("Statistics measure");
const HOUR = 3_600_000;
const DAY = 86_400_000;
const CONFIGS = ["gwc_01M8AAAAAAAAAAAAAAAAAAAAA1", "gwc_01M8AAAAAAAAAAAAAAAAAAAAA2"];

function item(pk: string, start: string, kind: "hour" | "day", configuration: string, n: number) {
  return {
    pk,
    sk: `${start}#${configuration}`,
    type: "statistics",
    gateway_configuration_id: configuration,
    [kind]: start,
    attempts: 10 * n,
    approved: 7 * n,
    declined: 2 * n,
    failed: 1 * n,
    amount_EUR: 123.45 * n,
  };
}

async function put(items: Record<string, unknown>[]) {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches.length) {
        const batch = batches[next++] as Record<string, unknown>[];
        let requests = batch.map((Item) => ({ PutRequest: { Item } }));
        while (requests.length > 0) {
          const out = await dynamo.send(
            new BatchWriteCommand({ RequestItems: { [config.tableName]: requests } }),
          );
          requests = (out.UnprocessedItems?.[config.tableName] ?? []) as typeof requests;
        }
      }
    }),
  );
}

async function seed(scope: string, to: number, hourDays: number, dayDays: number) {
  const items: Record<string, unknown>[] = [];
  for (let shard = 0; shard < 16; shard++)
    for (const configuration of CONFIGS) {
      for (let at = to - hourDays * DAY; at < to; at += HOUR)
        items.push(
          item(
            `${scope}#statistics#${shard}`,
            new Date(at).toISOString().slice(0, 13),
            "hour",
            configuration,
            1,
          ),
        );
      for (let at = to - dayDays * DAY; at < to; at += DAY)
        items.push(
          item(
            `${scope}#statistics-day#${shard}`,
            new Date(at).toISOString().slice(0, 10),
            "day",
            configuration,
            24,
          ),
        );
    }
  await put(items);
  return items.length;
}

async function time(client: ReturnType<typeof api>, query: string) {
  const runs: number[] = [];
  let bytes = 0;
  for (let run = 0; run < 7; run++) {
    const started = performance.now();
    const answer = await client.get(`/statistics?${query}`);
    runs.push(performance.now() - started);
    expect(answer.status).toBe(200);
    bytes = JSON.stringify(answer.body).length;
  }
  runs.sort((a, b) => a - b);
  return { median_ms: Math.round(runs[3] as number), kb: (bytes / 1024).toFixed(1) };
}

describe("measure", () => {
  it("reads", async () => {
    const to = Math.floor(Date.now() / DAY) * DAY; // midnight: whole days
    const iso = (ms: number) => new Date(ms).toISOString();
    const month = await createProject("Month full");
    const monthItems = await seed(month.sandbox.project_id, to, 31, 31);
    const client = api(local.url, month.sandbox);
    const results: Record<string, unknown> = { seeded_month: monthItems };
    results.hourly_1_day = await time(client, `from=${iso(to - DAY)}&to=${iso(to)}&interval=hour`);
    results.hourly_31_days = await time(client, `from=${iso(to - 31 * DAY)}&to=${iso(to)}&interval=hour`);
    results.daily_31_days = await time(client, `from=${iso(to - 31 * DAY)}&to=${iso(to)}&interval=day`);
    results.daily_366_days_month_full = await time(
      client,
      `from=${iso(to - 366 * DAY)}&to=${iso(to)}&interval=day`,
    );
    if (process.env.STATISTICS_YEAR) {
      const year = await createProject("Year full");
      results.seeded_year_days = await seed(year.sandbox.project_id, to, 0, 366);
      const yearClient = api(local.url, year.sandbox);
      results.daily_366_days_year_full = await time(
        yearClient,
        `from=${iso(to - 366 * DAY)}&to=${iso(to)}&interval=day`,
      );
    }
    console.log("statistics read (median ms)", JSON.stringify(results));
  }, 900_000);
});
