/**
 * The single table, as code: the CDK stack and the local stack both build it from this
 * definition, and the data access code names its attributes and indexes from here, so the
 * two can never drift.
 */
export const TABLE = {
  partitionKey: "pk",
  sortKey: "sk",
  /** Epoch seconds after which DynamoDB may delete the item (idempotency records, ...). */
  ttlAttribute: "expires_at",
  indexes: {
    /** Listing index: every listable resource of one environment, ordered by id (= creation time). */
    gsi1: { name: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk", projection: "ALL" },
    /**
     * A second access path, sparse: only the items that need one carry its keys. Work waiting for a
     * time, sorted by that time (a payment reservation until its lease ends, an environment's
     * scheduled jobs), and the few children of a parent (a customer's subscriptions).
     */
    gsi2: { name: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk", projection: "ALL" },
    /**
     * A third access path, sparse and holding keys only: a customer's transactions, by id. An item
     * can be in one partition of an index, and a transaction's `gsi2` keys are taken while one of
     * its operations is reserved. Keys only, so that counting a customer's transactions reads little;
     * a page of them is read from the table by key.
     */
    gsi3: { name: "gsi3", partitionKey: "gsi3pk", sortKey: "gsi3sk", projection: "KEYS_ONLY" },
  },
} as const;

export type IndexName = keyof typeof TABLE.indexes;

/** What an index holds of each item: all of it, or its keys (the table's and the index's) only. */
export type IndexProjection = (typeof TABLE.indexes)[IndexName]["projection"];
