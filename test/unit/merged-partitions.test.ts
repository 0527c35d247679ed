import { describe, expect, it } from "vitest";
import { mergedPartitionItems, type PartitionRead } from "../../shared/db/listing.ts";

/**
 * The merge of a sharded listing's partitions (exports, a test's every event): each partition read
 * a page at a time, in ascending id order; the merge in id order, each id once.
 */
function partitions(contents: Record<string, string[]>, pageSize: number, dropped: Set<string> = new Set()) {
  const reads: string[] = [];
  const read: PartitionRead = async (partition, start) => {
    reads.push(partition);
    const ids = contents[partition] ?? [];
    const from = start ? ids.indexOf(String(start.id)) + 1 : 0;
    const page = ids.slice(from, from + pageSize);
    const last = page.at(-1);
    return {
      // A filter drops items after the page is read: a page may come back empty, with more after it.
      Items: page.filter((id) => !dropped.has(id)).map((id) => ({ id })),
      LastEvaluatedKey: from + pageSize < ids.length && last ? { id: last } : undefined,
    };
  };
  return { read, reads };
}

async function all(names: string[], read: PartitionRead): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of mergedPartitionItems(names, "id", read)) ids.push(String(item.id));
  return ids;
}

describe("mergedPartitionItems", () => {
  it("hands on every item of every partition in id order, a page of each read at a time", async () => {
    const { read, reads } = partitions(
      { a: ["01", "04", "05", "09"], b: ["02", "03", "10"], c: [], d: ["06", "07", "08"] },
      2,
    );
    expect(await all(["a", "b", "c", "d"], read)).toEqual([
      "01",
      "02",
      "03",
      "04",
      "05",
      "06",
      "07",
      "08",
      "09",
      "10",
    ]);
    // a: 2 pages, b: 2, c: 1, d: 2 — each page once.
    expect(reads.filter((name) => name === "a")).toHaveLength(2);
    expect(reads).toHaveLength(7);
  });

  it("reads on past a page a filter emptied before deciding what comes first", async () => {
    const { read } = partitions(
      { a: ["01", "02", "03", "07"], b: ["04", "05", "06"] },
      2,
      new Set(["01", "02"]),
    );
    expect(await all(["a", "b"], read)).toEqual(["03", "04", "05", "06", "07"]);
  });

  it("gives an id found in two partitions once (an item seen mid-move), and keeps one partition as it is", async () => {
    const { read } = partitions({ old: ["01", "03"], shard: ["02", "03", "04"] }, 10);
    expect(await all(["old", "shard"], read)).toEqual(["01", "02", "03", "04"]);
    const single = partitions({ only: ["01", "02"] }, 1);
    expect(await all(["only"], single.read)).toEqual(["01", "02"]);
  });
});
