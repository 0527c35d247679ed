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
     * Due-work index, sparse: only items that are waiting for something to happen at a time carry
     * its keys (a payment reservation until its lease ends), sorted by that time.
     */
    gsi2: { name: "gsi2", partitionKey: "gsi2pk", sortKey: "gsi2sk" },
  },
} as const;

export type IndexName = keyof typeof TABLE.indexes;
