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
    gsi1: { name: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk" },
    /**
     * A second access path, sparse: only the items that need one carry its keys. Work waiting for a
     * time, sorted by that time (a payment reservation until its lease ends, an environment's
     * scheduled jobs), and the few children of a parent (a customer's subscriptions).
     */
    gsi2: { name: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk" },
  },
} as const;

export type IndexName = keyof typeof TABLE.indexes;
