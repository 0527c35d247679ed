import { describe, expect, it } from "vitest";
import { countChange, distinctCountShards } from "../../shared/db/counters.ts";
import type { TransactItem } from "../../shared/db/transactions.ts";

const shardOf = (item: TransactItem) => String(item.Update?.Key?.sk);

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
      expect(shardOf(sent[3] as TransactItem)).toMatch(/^customer#\d$/);
    }
  });

  it("leave a transaction without duplicates as it is", () => {
    const items = [countChange("scope", "event", 1)];
    expect(distinctCountShards(items)[0]).toBe(items[0]);
  });
});
