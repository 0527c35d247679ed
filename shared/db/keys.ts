/**
 * Key formats of every item in the single table. Every partition key starts with the
 * environment project id (`proj_…` for live, `test-proj_…` for sandbox), so sandbox and live
 * data never share a partition-key prefix and one project can never address another's items.
 */
export type Scope = string;

/** Entities listed through the listing index; each keeps its own count. */
export type ListedEntity = "customer" | "invoice";

export const COUNTER_SHARDS = 8;
export const IDEMPOTENCY_SORT_KEY = "idempotency";

export const keys = {
  /** The environment of a project: its credentials and settings. */
  project: (scope: Scope) => ({ pk: scope, sk: "project" }),
  /** A top-level resource (customer, invoice, …) addressed by its id. */
  resource: (scope: Scope, id: string) => ({ pk: `${scope}#${id}`, sk: "resource" }),
  /** Items owned by a resource live in the resource's partition (a customer's tokens, …). */
  child: (scope: Scope, parentId: string, kind: string, id: string) => ({
    pk: `${scope}#${parentId}`,
    sk: `${kind}#${id}`,
  }),
  childPrefix: (kind: string) => `${kind}#`,
  listing: (scope: Scope, entity: ListedEntity, id: string) => ({
    gsi1pk: `${scope}#${entity}`,
    gsi1sk: id,
  }),
  listingPartition: (scope: Scope, entity: ListedEntity) => `${scope}#${entity}`,
  counterShard: (scope: Scope, entity: ListedEntity, shard: number) => ({
    pk: `${scope}#counter`,
    sk: `${entity}#${shard}`,
  }),
  counterPartition: (scope: Scope) => `${scope}#counter`,
  idempotency: (scope: Scope, key: string) => ({
    pk: `${scope}#idempotency#${key}`,
    sk: IDEMPOTENCY_SORT_KEY,
  }),
};
