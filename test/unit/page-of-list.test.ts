import { describe, expect, it } from "vitest";
import { pageOfList } from "../../shared/db/listing.ts";

const items = ["a", "b", "c", "d", "e"].map((id) => ({ id }));
const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);

describe("a page of a list read whole", () => {
  it("follows the listing rules: newest first by default, cursors excluded, has_more in the direction of travel", () => {
    const first = pageOfList(items, { limit: 2, order: "desc" });
    expect(first).toEqual({ items: [{ id: "e" }, { id: "d" }], hasMore: true, totalCount: 5 });
    expect(ids(pageOfList(items, { limit: 2, order: "desc", startAfter: "d" }))).toEqual(["c", "b"]);
    expect(pageOfList(items, { limit: 2, order: "desc", startAfter: "b" })).toMatchObject({ hasMore: false });
    expect(ids(pageOfList(items, { limit: 2, order: "asc", startAfter: "a" }))).toEqual(["b", "c"]);
  });

  it("pages backward from end_before, keeping the page in the requested order", () => {
    const page = pageOfList(items, { limit: 2, order: "asc", endBefore: "d" });
    expect(ids(page)).toEqual(["b", "c"]);
    expect(page.hasMore).toBe(true);
    expect(pageOfList(items, { limit: 5, order: "asc", endBefore: "c" })).toMatchObject({ hasMore: false });
    expect(ids(pageOfList(items, { limit: 2, order: "desc", endBefore: "b" }))).toEqual(["d", "c"]);
  });

  it("orders items by id whatever order they were read in", () => {
    expect(ids(pageOfList([...items].reverse(), { limit: 10, order: "asc" }))).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
  });
});
