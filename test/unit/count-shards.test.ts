import { describe, expect, it } from "vitest";
import { countChange, distinctCountShards } from "../../shared/db/counters.ts";
import type { TransactItem } from "../../shared/db/transactions.ts";

const shardOf = (item: TransactItem) => String(item.Update?.Key?.pk);

describe("count changes in one transaction", () => {
  it("go to distinct shards, each item in its place, whatever shards they picked", () => {
    const other: TransactItem = {
      ConditionCheck: {
        TableName: "t",
        Key: { pk: "x", sk: "y" },
        ConditionExpression: "attribute_exists(pk)",
      },
    };
    for (let run = 0; run < 50; run++) {
      const items = [
        countChange("scope", "event", 1),
        other,
        countChange("scope", "event", 2),
        countChange("scope", "customer", 1),
      ];
      const sent = distinctCountShards(items);
      expect(sent).toHaveLength(4);
      expect(sent[1]).toBe(other);
      expect(shardOf(sent[0] as TransactItem)).not.toBe(shardOf(sent[2] as TransactItem));
      expect(sent.map((item) => item.Update?.ExpressionAttributeValues?.[":delta"])).toEqual([
        1,
        undefined,
        2,
        1,
      ]);
      expect(shardOf(sent[3] as TransactItem)).toMatch(/^scope#counter#customer#\d+$/);
    }
  });

  it("leave a transaction without duplicates as it is", () => {
    const items = [countChange("scope", "event", 1)];
    expect(distinctCountShards(items)[0]).toBe(items[0]);
  });

  it("spread a count over partition keys of its own, one per shard", () => {
    const keys = new Set<string>();
    for (let run = 0; run < 400; run++) {
      const key = countChange("scope", "event", 1).Update?.Key;
      expect(key?.sk).toBe("counter");
      keys.add(String(key?.pk));
    }
    // Events' count has 16 shards (`SHARDS` in keys.ts): 400 random picks find every one.
    expect([...keys].sort()).toEqual(
      Array.from({ length: 16 }, (_, shard) => `scope#counter#event#${shard}`).sort(),
    );
  });

  it("take up to as many changes of one count in a transaction as it has shards, and refuse more", () => {
    const changes = (times: number) =>
      Array.from({ length: times }, () => countChange("scope", "customer", 1));
    expect(new Set(distinctCountShards(changes(8)).map(shardOf)).size).toBe(8);
    expect(() => distinctCountShards(changes(9))).toThrow(RangeError);
  });
});
