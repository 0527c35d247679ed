import { beforeAll, describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Listing test");
const client = local.sandbox;
/** The 25 customers' ids in creation order. */
const ids: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 25; i++)
    ids.push((await client.post("/customers", { first_name: `n${i}` })).body.customer.id);
});

async function page(query: string) {
  const { status, body } = await client.get(`/customers?${query}`);
  expect(status).toBe(200);
  return {
    ids: body.customers.map((customer: { id: string }) => customer.id) as string[],
    hasMore: body.has_more as boolean,
    envelope: { count: body.count, total_count: body.total_count, limit: body.limit, order: body.order },
  };
}

describe("GET /customers with 25 customers", () => {
  const ascending = () => ids;
  const descending = () => [...ids].reverse();

  it.each([
    ["desc", descending],
    ["asc", ascending],
  ] as const)(
    "pages forward in %s order with start_after until has_more is false",
    async (order, expected) => {
      const first = await page(`order=${order}`);
      expect(first.envelope).toEqual({ count: 10, total_count: 25, limit: 10, order });
      expect(first.hasMore).toBe(true);
      const second = await page(`order=${order}&start_after=${first.ids.at(-1)}`);
      expect(second.hasMore).toBe(true);
      const third = await page(`order=${order}&start_after=${second.ids.at(-1)}`);
      expect(third.envelope).toEqual({ count: 5, total_count: 25, limit: 10, order });
      expect(third.hasMore).toBe(false);
      expect([...first.ids, ...second.ids, ...third.ids]).toEqual(expected());
    },
  );

  it.each([
    ["desc", descending],
    ["asc", ascending],
  ] as const)(
    "pages backward in %s order with end_before until has_more is false",
    async (order, expected) => {
      const all = expected();
      const last = all.at(-1) as string;
      const first = await page(`order=${order}&end_before=${last}`);
      expect(first.ids).toEqual(all.slice(14, 24));
      expect(first.hasMore).toBe(true);
      const second = await page(`order=${order}&end_before=${first.ids[0]}`);
      expect(second.ids).toEqual(all.slice(4, 14));
      expect(second.hasMore).toBe(true);
      const third = await page(`order=${order}&end_before=${second.ids[0]}`);
      expect(third.ids).toEqual(all.slice(0, 4));
      expect(third.hasMore).toBe(false);
      expect(third.envelope.total_count).toBe(25);
    },
  );

  it("says has_more is false when a page holds the last item exactly", async () => {
    const all = await page("order=asc&limit=25");
    expect(all.ids).toEqual(ids);
    expect(all.hasMore).toBe(false);
    const tail = await page(`order=asc&limit=5&start_after=${ids[19]}`);
    expect(tail.ids).toEqual(ids.slice(20));
    expect(tail.hasMore).toBe(false);
    const head = await page(`order=asc&limit=5&end_before=${ids[5]}`);
    expect(head.ids).toEqual(ids.slice(0, 5));
    expect(head.hasMore).toBe(false);
  });

  it("takes limit=0 and empty cursors as not given, and limit=1 for the total count", async () => {
    const noisy = await page("filter=&limit=0&end_before=&start_after=");
    expect(noisy.envelope).toMatchObject({ count: 10, limit: 10, order: "desc" });
    expect(noisy.ids).toEqual(descending().slice(0, 10));
    expect((await page("limit=1")).envelope).toEqual({ count: 1, total_count: 25, limit: 1, order: "desc" });
  });

  it("refuses start_after combined with end_before, naming both", async () => {
    const { status, body } = await client.get(`/customers?start_after=${ids[3]}&end_before=${ids[9]}`);
    expect(status).toBe(400);
    expect(body.invalid_fields.map((field: { name: string }) => field.name)).toEqual([
      "start_after",
      "end_before",
    ]);
  });
});
