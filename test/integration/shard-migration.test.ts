/**
 * The listing index and the counts sharded (issue 23): data written in the layout of before reads
 * the same, and `migrateToShards` moves it to the shards without changing a list or a count.
 *
 * The layout of before is written here by this file's own code, as the code of before wrote it: a
 * listed item's `gsi1pk` was `{scope}#{entity}`, and an environment's counts were items of one
 * partition `{scope}#counter` with sort keys `{entity}#{0..7}`.
 */
import { DeleteCommand, QueryCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { migrateToShards, type SegmentPositions } from "../../shared/db/shard-migration.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { useOwnTable } from "../support/own-table.ts";

// The migration scans its whole table: on a table of its own it reads this file's items only, not
// those of every file running beside it.
useOwnTable("shard migration");
const local = useInProcessApi("Shard migration test");

const LISTS = ["customers", "invoices", "transactions", "events", "cards"] as const;
/** The entities of those lists, as their items' `gsi1pk` names them. */
const ENTITIES = ["customer", "invoice", "transaction", "event", "card"];

let client: Client;
let scope: string;
/** What the test created, by list, in creation order. */
const created: Record<(typeof LISTS)[number], string[]> = {
  customers: [],
  invoices: [],
  transactions: [],
  events: [],
  cards: [],
};

async function post(path: string, body: Record<string, unknown> = {}) {
  const answer = await client.post(path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

beforeAll(async () => {
  const project = await createProject("Shard migration");
  client = api(local.url, project.sandbox);
  scope = project.sandbox.project_id;
  for (let i = 0; i < 14; i++) {
    const customer = (await post("/customers", { first_name: `c${i}` })).customer;
    created.customers.push(customer.id);
    const invoice = (
      await post("/invoices", {
        name: `n${i}`,
        amount: "3.00",
        currency: "EUR",
        ...(i % 2 === 0 ? { customer_id: customer.id } : {}),
      })
    ).invoice;
    created.invoices.push(invoice.id);
    if (i % 3 !== 2) {
      const card = (await post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })).card;
      created.cards.push(card.id);
      const paid = await post(`/invoices/${invoice.id}/capture`, { source: card.id });
      created.transactions.push(paid.transaction.id);
    }
  }
  // One of each deleted: counted out, and gone from its list.
  expect((await client.del(`/customers/${created.customers.splice(3, 1)[0]}`)).status).toBe(200);
  expect((await client.del(`/invoices/${created.invoices.splice(2, 1)[0]}`)).status).toBe(200);
});

interface Snapshot {
  /** Each page's ids, `has_more` and `total_count`, and its whole answer. */
  pages: Array<{ query: string; ids: string[]; has_more: boolean; total_count: number; body: unknown }>;
}

const EXPAND: Partial<Record<(typeof LISTS)[number], string>> = {
  invoices: "customer",
  transactions: "invoice,customer",
};

/**
 * Every page of each list, walked forward in both orders with `start_after` (limit 4) and back
 * with `end_before` from the newest, and one page expanded: ids, `has_more`, `total_count`.
 */
async function snapshot(): Promise<Record<string, Snapshot>> {
  const result: Record<string, Snapshot> = {};
  for (const list of LISTS) {
    const pages: Snapshot["pages"] = [];
    const read = async (query: string) => {
      const { status, body } = await client.get(`/${list}?${query}`);
      expect(status, JSON.stringify(body)).toBe(200);
      const ids = (body[list] as Array<{ id: string }>).map((item) => item.id);
      pages.push({ query, ids, has_more: body.has_more, total_count: body.total_count, body });
      return { ids, hasMore: body.has_more as boolean };
    };
    // Events are the longest list (about 80): pages of 12 still cross every shard several times.
    const limit = list === "events" ? 12 : 4;
    for (const order of ["asc", "desc"]) {
      let cursor: string | undefined;
      for (;;) {
        const page = await read(`order=${order}&limit=${limit}${cursor ? `&start_after=${cursor}` : ""}`);
        cursor = page.ids.at(-1);
        if (!page.hasMore) break;
      }
    }
    // Back from the newest with end_before, to the oldest.
    let cursor = pages.find((page) => page.query.startsWith("order=desc"))?.ids[0];
    while (cursor) {
      const page = await read(`order=asc&limit=${limit - 1}&end_before=${cursor}`);
      if (!page.hasMore) break;
      cursor = page.ids[0];
    }
    // The unset options as a client library sends them, and an expanded page.
    await read("filter=&limit=0&start_after=&end_before=");
    if (EXPAND[list]) await read(`limit=5&expand=${EXPAND[list]}`);
    result[list] = { pages };
  }
  return result;
}

/** Every item of the test's environment in the table (keys and listing keys). */
async function environmentItems(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const output = await dynamo.send(
      new ScanCommand({
        TableName: config.tableName,
        FilterExpression: "begins_with(pk, :scope)",
        ExpressionAttributeValues: { ":scope": `${scope}#` },
        ProjectionExpression: "pk, sk, gsi1pk, gsi1sk, n",
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(output.Items ?? []));
    start = output.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Rewrites the environment's listings and counts in the layout of before; returns how many of each. */
async function toLayoutOfBefore(): Promise<{ listings: number; counters: number }> {
  let listings = 0;
  const counts = new Map<string, number>();
  for (const item of await environmentItems()) {
    const listing = String(item.gsi1pk ?? "").match(new RegExp(`^${scope}#(${ENTITIES.join("|")})#\\d+$`));
    if (listing) {
      await dynamo.send(
        new UpdateCommand({
          TableName: config.tableName,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: "SET gsi1pk = :old",
          ExpressionAttributeValues: { ":old": `${scope}#${listing[1]}` },
        }),
      );
      listings += 1;
    }
    const counter = String(item.pk).match(new RegExp(`^${scope}#counter#([a-z_]+)#(\\d+)$`));
    if (counter) {
      await dynamo.send(
        new DeleteCommand({ TableName: config.tableName, Key: { pk: item.pk, sk: item.sk } }),
      );
      const sk = `${counter[1]}#${Number(counter[2]) % 8}`;
      counts.set(sk, (counts.get(sk) ?? 0) + Number(item.n));
    }
  }
  for (const [sk, n] of counts) {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: { pk: `${scope}#counter`, sk },
        UpdateExpression: "ADD n :n SET #type = :type",
        ExpressionAttributeNames: { "#type": "type" },
        ExpressionAttributeValues: { ":n": n, ":type": "counter" },
      }),
    );
  }
  return { listings, counters: counts.size };
}

/** How the environment's items are laid out: listings and counts of before, and of the shards. */
async function layout() {
  const items = await environmentItems();
  const oldListing = new RegExp(`^${scope}#(${ENTITIES.join("|")})$`);
  const shardListing = new RegExp(`^${scope}#(${ENTITIES.join("|")})#\\d+$`);
  return {
    oldListings: items.filter((item) => oldListing.test(String(item.gsi1pk))).length,
    shardListings: items.filter((item) => shardListing.test(String(item.gsi1pk))).length,
    oldCounters: items.filter((item) => item.pk === `${scope}#counter`).length,
    shardCounters: items.filter((item) => String(item.pk).startsWith(`${scope}#counter#`)).length,
  };
}

/** The items the listing index holds in the one partition of before of each entity. */
async function inOldListingPartitions(): Promise<number> {
  let count = 0;
  for (const entity of ENTITIES) {
    const { Count = 0 } = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": `${scope}#${entity}` },
        Select: "COUNT",
      }),
    );
    count += Count;
  }
  return count;
}

// Hundreds of sequential requests per test: beside a heavy file (a browser, a stack of its own) on
// 2 cores they took past the suite's 60 s, against 4 to 10 s alone. The limit catches a hang.
describe("the listing index and the counts, sharded", { timeout: 180_000 }, () => {
  let sharded: Record<string, Snapshot>;

  it("list what was created, in creation order, with exact counts", async () => {
    sharded = await snapshot();
    const events = (await client.get("/events?limit=1")).body.total_count as number;
    for (const list of ["customers", "invoices", "transactions", "cards"] as const) {
      const ascending = sharded[list]?.pages.filter((page) => page.query.startsWith("order=asc&limit=4"));
      expect(ascending?.flatMap((page) => page.ids)).toEqual(created[list]);
      const descending = sharded[list]?.pages.filter((page) => page.query.startsWith("order=desc&limit=4"));
      expect(descending?.flatMap((page) => page.ids)).toEqual([...created[list]].reverse());
      expect(new Set(sharded[list]?.pages.map((page) => page.total_count))).toEqual(
        new Set([created[list].length]),
      );
    }
    // Events in the order they happened: ids sorted, as many as counted, each once.
    const eventIds = sharded.events?.pages
      .filter((page) => page.query.startsWith("order=asc&limit=12"))
      .flatMap((page) => page.ids);
    expect(eventIds).toEqual([...(eventIds ?? [])].sort());
    expect(new Set(eventIds).size).toBe(events);
    expect(events).toBeGreaterThan(created.transactions.length);
    // Written in the shards, none in the layout of before.
    expect(await layout()).toMatchObject({ oldListings: 0, oldCounters: 0 });
  });

  it("answer the same on data of the layout of before, and after its migration, twice", async () => {
    const moved = await toLayoutOfBefore();
    const before = await layout();
    expect(before.shardListings).toBe(0);
    expect(before.shardCounters).toBe(0);
    expect(before.oldListings).toBe(moved.listings);
    expect(moved.listings).toBeGreaterThan(40);
    expect(await inOldListingPartitions()).toBe(moved.listings);
    expect(await snapshot()).toEqual(sharded);

    const first = await migrateToShards({ segments: 3 });
    expect(first).toMatchObject({
      complete: true,
      listingsMoved: moved.listings,
      countersMoved: moved.counters,
    });
    expect(await layout()).toMatchObject({ oldListings: 0, oldCounters: 0, shardListings: moved.listings });
    expect(await inOldListingPartitions()).toBe(0);
    expect(await snapshot()).toEqual(sharded);

    const again = await migrateToShards({ segments: 2 });
    expect(again).toMatchObject({ complete: true, listingsMoved: 0, countersMoved: 0 });
    expect(await snapshot()).toEqual(sharded);
  });

  it("resumes a migration stopped midway from where it stopped", async () => {
    const moved = await toLayoutOfBefore();
    let positions: SegmentPositions = {};
    const stopped = await migrateToShards({
      segments: 1,
      pageSize: 25,
      maxPages: 2,
      progress: (at) => {
        positions = at;
      },
    });
    expect(stopped.complete).toBe(false);
    expect(positions[0]).toBeTruthy();
    const resumed = await migrateToShards({ segments: 1, pageSize: 25, resumeFrom: positions });
    expect(resumed.complete).toBe(true);
    expect(stopped.listingsMoved + resumed.listingsMoved).toBe(moved.listings);
    expect(stopped.countersMoved + resumed.countersMoved).toBe(moved.counters);
    expect(await layout()).toMatchObject({ oldListings: 0, oldCounters: 0, shardListings: moved.listings });
    expect(await snapshot()).toEqual(sharded);
  });
});
