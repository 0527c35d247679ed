import type { CredentialKind } from "../http/auth.ts";

/**
 * Key formats of every item in the single table. Every partition key starts with the
 * environment project id (`proj_…` for live, `test-proj_…` for sandbox), so sandbox and live
 * data never share a partition-key prefix and one project can never address another's items.
 */
export type Scope = string;

/** Entities listed through the listing index; each keeps its own count. */
export type ListedEntity =
  | "customer"
  | "invoice"
  | "event"
  | "transaction"
  | "plan"
  | "coupon"
  | "subscription"
  | "payout"
  | "card"
  | "activity"
  | "supervised_project"
  | "product"
  | "export_layout"
  | "export";

/** The primary key of an item. */
export interface ItemKey {
  pk: string;
  sk: string;
}

export const RESERVATION_SHARDS = 8;

/**
 * How many partition keys each listed entity's listing (`gsi1`) and count are spread over. A
 * partition takes at most 1,000 write units per second; the target is that one project's traffic
 * reaches that nowhere below 5,000 requests per second. Measured under the load bench's mixed load
 * (`bench/load.ts`, before sharding), the write units a request brings on average, and what that
 * makes at 5,000 req/s:
 * - listing `event`: 2.45 WCU per request (0.63 events, ~3.9 KB each) → 12,300 WCU/s: at least 13
 *   partitions; 32 keeps each at ~380 WCU/s, some 2.6 times below the limit (the hash spreads the
 *   ids evenly, but a second's writes are bursty: the bench's peak second is ~1.7 times its mean);
 * - listing `transaction`: 1.3 WCU per request → 6,500 WCU/s: at least 7; 16 (~410 each);
 * - listing `invoice`: 0.37 WCU per request → 1,850 WCU/s: at least 2; 8 (~230 each);
 * - listing `customer`: 0.13 WCU per request → 650 WCU/s; 8 all the same, and `card` 16: a
 *   customer import or a checkout that tokenizes a card per payment (~1–2 KB each) at 5,000 per
 *   second would bring 5,000–10,000 WCU/s;
 * - counts: a count change is one 2-unit update (in a transaction) on a shard picked at random;
 *   events are counted in 0.5 of the requests (one update per transaction, whatever its number of
 *   events) → 5,000 WCU/s at 5,000 req/s: 16 shards (~310 each); 8 for transactions, invoices,
 *   customers and cards (at most one change per request each: ≤ 10,000 WCU/s for a pure stream of
 *   one kind, ≤ 1,250 per shard); 8 for the others too, as before the sharding: a transaction may
 *   change one count up to that many times (`distinctCountShards`).
 * Every shard is one more item a list reads (a page from each listing shard, merged; the count's
 * shards in one BatchGetItem): entities written at the pace of an administrator keep one listing
 * partition.
 * Changing a number moves items between partitions: it needs the migration of
 * `bin/migrate-shards.ts`, and the old layout read meanwhile (`LEGACY_LAYOUT`).
 */
export const SHARDS: Readonly<Record<ListedEntity, { listing: number; counter: number }>> = {
  event: { listing: 32, counter: 16 },
  transaction: { listing: 16, counter: 8 },
  invoice: { listing: 8, counter: 8 },
  customer: { listing: 8, counter: 8 },
  card: { listing: 16, counter: 8 },
  plan: { listing: 1, counter: 8 },
  coupon: { listing: 1, counter: 8 },
  subscription: { listing: 1, counter: 8 },
  payout: { listing: 1, counter: 8 },
  activity: { listing: 1, counter: 8 },
  supervised_project: { listing: 1, counter: 8 },
  product: { listing: 1, counter: 8 },
  export_layout: { listing: 1, counter: 8 },
  export: { listing: 1, counter: 8 },
};

/**
 * The settlement lines of an environment's business day are spread over this many partitions (by
 * line id): one line per capture, refund or chargeback; 0.17 WCU per request of the mixed load (a
 * 2-unit put in 1 of 6 requests) → 1,700 WCU/s at 5,000 req/s, or 10,000 for a stream of captures;
 * 16 keeps each below 650. The day's close reads them all (and the day's one partition of before).
 */
export const SETTLEMENT_SHARDS = 16;

/**
 * The authorization statistics of an environment (`shared/statistics`) are spread over this many
 * partitions, a shard picked at random per attempt: each attempt is one 2-unit update (in its
 * settlement's transaction) of its configuration's hour, so 5,000 attempts per second of one
 * configuration would bring 10,000 WCU/s to a single item; 16 keeps each partition near 625. The
 * day's update goes to 16 partitions of its own, near 625 each too. A read queries the 16
 * partitions of its interval at once.
 */
export const STATISTICS_SHARDS = 16;

/**
 * Whether the reads also look at the layout of before the sharding (one listing partition per
 * entity, one counter partition per environment with its shards as sort keys): until every stage
 * ran `bin/migrate-shards.ts`, items and counts written before the deploy stay found
 * and counted. One more query in the same round; nothing is written there any more.
 */
export const LEGACY_LAYOUT = true;

/** A stable shard of `id` among `shards` (the same id always lands on the same shard). */
export function shardOf(id: string, shards: number): number {
  let hash = 0;
  for (let index = 0; index < id.length; index++) hash = (hash * 31 + id.charCodeAt(index)) >>> 0;
  return hash % shards;
}
export const IDEMPOTENCY_SORT_KEY = "idempotency";
/** The partition-key prefix of the key-use items (`keys.keyUse`), which IAM conditions name. */
export const KEY_USE_PREFIX = "key-use#";

export const keys = {
  /** The environment of a project: its credentials and settings. */
  project: (scope: Scope) => ({ pk: scope, sk: "project" }),
  /**
   * A gateway configuration of an environment: a few per environment, kept in the environment's
   * own partition so that one query reads them all (a payment picks its configuration from them).
   */
  gatewayConfiguration: (scope: Scope, id: string) => ({ pk: scope, sk: `gateway-configuration#${id}` }),
  gatewayConfigurationPrefix: "gateway-configuration#",
  /** An environment's routing rules: beside its configurations, read with them (`gatewaySetupPrefix`). */
  routingRules: (scope: Scope) => ({ pk: scope, sk: "gateway-routing" }),
  gatewaySetupPrefix: "gateway-",
  /**
   * Which export layout is the default of its type in an environment (`shared/exports`): one item per
   * type, so that making a layout the default replaces the previous one in one conditional write.
   */
  exportLayoutDefault: (scope: Scope, type: string): ItemKey => ({
    pk: `${scope}#export-layout-default`,
    sk: type,
  }),
  /** An environment's SFTP settings (where its automatic exports are delivered), secrets sealed. */
  sftpSettings: (scope: Scope): ItemKey => ({ pk: scope, sk: "sftp-settings" }),
  /**
   * An Apple Pay merchant certificate of an environment (`shared/applepay`): a few per environment,
   * in one partition, so that one query lists them.
   */
  applepayCertificate: (scope: Scope, id: string): ItemKey => ({
    pk: `${scope}#applepay-certificate`,
    sk: id,
  }),
  applepayCertificates: (scope: Scope) => `${scope}#applepay-certificate`,
  /** A top-level resource (customer, invoice, …) addressed by its id. */
  resource: (scope: Scope, id: string) => ({ pk: `${scope}#${id}`, sk: "resource" }),
  /**
   * A plan, addressed by the merchant's own id: in a partition of its own kind, so that no plan id
   * can ever name another resource's partition.
   */
  plan: (scope: Scope, id: string): ItemKey => ({ pk: `${scope}#plan#${id}`, sk: "plan" }),
  /** A coupon, by the merchant's own id, in a partition of its own kind as a plan. */
  coupon: (scope: Scope, id: string): ItemKey => ({ pk: `${scope}#coupon#${id}`, sk: "coupon" }),
  /** Items owned by a resource live in the resource's partition (a customer's tokens, …). */
  child: (scope: Scope, parentId: string, kind: string, id: string) => ({
    pk: `${scope}#${parentId}`,
    sk: `${kind}#${id}`,
  }),
  childPrefix: (kind: string) => `${kind}#`,
  /**
   * Where an item is listed: in one of its entity's listing partitions (`SHARDS`), by its id; an
   * entity of one partition keeps the key of before, `{scope}#{entity}`.
   */
  listing: (scope: Scope, entity: ListedEntity, id: string) => ({
    gsi1pk: keys.listingShard(scope, entity, shardOf(id, SHARDS[entity].listing)),
    gsi1sk: id,
  }),
  listingShard: (scope: Scope, entity: ListedEntity, shard: number) =>
    SHARDS[entity].listing === 1 ? `${scope}#${entity}` : `${scope}#${entity}#${shard}`,
  /** Every listing partition of an entity (a list reads them together and merges them by id). */
  listingPartitions: (scope: Scope, entity: ListedEntity): string[] =>
    Array.from({ length: SHARDS[entity].listing }, (_, shard) => keys.listingShard(scope, entity, shard)),
  /** The one listing partition of an entity before the sharding (read until migrated: `LEGACY_LAYOUT`). */
  legacyListingPartition: (scope: Scope, entity: ListedEntity) => `${scope}#${entity}`,
  /** A shard of an entity's count: each a partition key of its own. */
  counterShard: (scope: Scope, entity: ListedEntity, shard: number): ItemKey => ({
    pk: `${scope}#counter#${entity}#${shard}`,
    sk: "counter",
  }),
  /** Before the sharding, every count of an environment in one partition, `{entity}#{shard}` sort keys. */
  legacyCounterPartition: (scope: Scope) => `${scope}#counter`,
  /**
   * Where a reserved payment operation waits in the due-work index until its lease ends, so the
   * recovery job finds the abandoned ones (`shared/payments/recovery.ts`): spread over a few shards
   * (by the transaction's id) so that busy payment traffic never makes one index partition hot.
   */
  reservationDue: (transactionId: string, leaseUntil: string) => ({
    gsi2pk: `reservations#${shardOf(transactionId, RESERVATION_SHARDS)}`,
    gsi2sk: `${leaseUntil}#${transactionId}`,
  }),
  reservationPartition: (shard: number) => `reservations#${shard}`,
  /** A customer's subscriptions, in the second access path (few per customer: read at once). */
  customerSubscription: (scope: Scope, customerId: string, subscriptionId: string) => ({
    gsi2pk: `${scope}#${customerId}#subscriptions`,
    gsi2sk: subscriptionId,
  }),
  customerSubscriptionsPartition: (scope: Scope, customerId: string) =>
    `${scope}#${customerId}#subscriptions`,
  /** A customer's transactions, in the third access path (keys only), by id: listed a page at a time. */
  customerTransaction: (scope: Scope, customerId: string, transactionId: string) => ({
    gsi3pk: keys.customerTransactionsPartition(scope, customerId),
    gsi3sk: transactionId,
  }),
  customerTransactionsPartition: (scope: Scope, customerId: string) => `${scope}#${customerId}#transactions`,
  /**
   * The sandbox gateway's own memory (`shared/gateways/sandbox/ledger.ts`), as a provider keeps it:
   * each operation under its reference (so a repeat returns the first answer and `lookup` finds it),
   * the increments of an authorization beside it, and what it remembers of a card (by fingerprint).
   */
  sandboxOperation: (scope: Scope, reference: string): ItemKey => ({
    pk: `${scope}#sandbox-gateway#${reference}`,
    sk: "operation",
  }),
  sandboxIncrement: (scope: Scope, authorization: string, reference: string): ItemKey => ({
    pk: `${scope}#sandbox-gateway#${authorization}`,
    sk: `increment#${reference}`,
  }),
  sandboxIncrementPrefix: "increment#",
  /**
   * A sandbox gift card's money moved by an operation (`shared/gateways/sandbox/gift-cards.ts`): the
   * amount an authorization took (`spend`, under the authorization's reference) or a refund gave back
   * (`credit`, under the refund's), so a repeated operation moves nothing twice.
   */
  sandboxGiftCardMove: (scope: Scope, reference: string, move: "spend" | "credit"): ItemKey => ({
    pk: `${scope}#sandbox-gateway#${reference}`,
    sk: `gift-card#${move}`,
  }),
  sandboxCard: (scope: Scope, fingerprint: string): ItemKey => ({
    pk: `${scope}#sandbox-card#${fingerprint}`,
    sk: "card",
  }),
  /**
   * A 3DS challenge, addressed by the unguessable token of its page (`/3ds/{token}`), which needs no
   * credentials: the item tells which environment's transaction the answer belongs to.
   */
  challenge: (token: string) => ({ pk: `challenge#${token}`, sk: "challenge" }),
  /**
   * Which environment a gateway configuration belongs to, by the configuration's id alone: the
   * provider's webhooks arrive at `/gateway-webhooks/{id}`, without credentials.
   */
  gatewayConfigurationOwner: (id: string): ItemKey => ({ pk: `gateway-configuration#${id}`, sk: "owner" }),
  /**
   * The transaction of a payment at a provider (its reference there, through one configuration):
   * how a provider's webhook about a payment finds it.
   */
  gatewayPayment: (scope: Scope, configurationId: string, gatewayReference: string): ItemKey => ({
    pk: `${scope}#gateway-payment#${configurationId}#${gatewayReference}`,
    sk: "transaction",
  }),
  /**
   * What a provider's webhook said of one of our operations (its reference there): the provider's
   * record, which `lookup` reads where the provider has no other (Adyen). One item per event.
   */
  gatewayNotification: (
    scope: Scope,
    configurationId: string,
    reference: string,
    event: string,
  ): ItemKey => ({
    pk: `${scope}#gateway-notification#${configurationId}#${reference}`,
    sk: event,
  }),
  /**
   * A money movement the sandbox gateway settled (a capture, a refund, a chargeback), written in the
   * transaction that settles it: one partition per environment and business day, so the day's
   * close reads the day in one query (`shared/payouts/settlement.ts`).
   */
  settlementLine: (scope: Scope, day: string, lineId: string): ItemKey => ({
    pk: `${keys.settlementDay(scope, day)}#${shardOf(lineId, SETTLEMENT_SHARDS)}`,
    sk: `line#${lineId}`,
  }),
  /**
   * One shard of an environment's authorization statistics: an item per hour (UTC, of business time)
   * and gateway configuration, sorted by hour so that one query per shard reads a range of hours.
   */
  statistics: (scope: Scope, shard: number, hour: string, configurationId: string): ItemKey => ({
    pk: keys.statisticsShard(scope, shard),
    sk: `${hour}#${configurationId}`,
  }),
  statisticsShard: (scope: Scope, shard: number) => `${scope}#statistics#${shard}`,
  /**
   * The same counts by day (UTC, of business time), written beside the hour's in the same
   * transaction, on partitions of their own (so each partition takes one update per attempt): a
   * daily read queries days, not 24 times as many hours.
   */
  statisticsDay: (scope: Scope, shard: number, day: string, configurationId: string): ItemKey => ({
    pk: keys.statisticsDayShard(scope, shard),
    sk: `${day}#${configurationId}`,
  }),
  statisticsDayShard: (scope: Scope, shard: number) => `${scope}#statistics-day#${shard}`,
  /**
   * When each private key of an environment was last used (`shared/projects/key-use.ts`): apart from
   * the environment's item, so that recording a use never races the keys' `keys_version` writes. Its
   * partition key starts with `key-use#` so that the functions that only read the table may be
   * allowed to update exactly these items (an IAM `dynamodb:LeadingKeys` condition).
   */
  keyUse: (scope: Scope): ItemKey => ({ pk: `${KEY_USE_PREFIX}${scope}`, sk: "key-use" }),
  /**
   * Search entries (`shared/search`): one item per searchable value of an object, written in the
   * write that sets the value, in a partition of that value within the environment, sorted by the
   * object's id, so that one query answers a search, newest first. A transaction under its card's
   * last four digits; a customer under a hash of its email (no address in a key).
   */
  searchCardLast4: (scope: Scope, last4: string, transactionId: string): ItemKey => ({
    pk: keys.searchCardLast4Partition(scope, last4),
    sk: transactionId,
  }),
  searchCardLast4Partition: (scope: Scope, last4: string) => `${scope}#search#card-last-4#${last4}`,
  searchEmail: (scope: Scope, emailHash: string, customerId: string): ItemKey => ({
    pk: keys.searchEmailPartition(scope, emailHash),
    sk: customerId,
  }),
  searchEmailPartition: (scope: Scope, emailHash: string) => `${scope}#search#email#${emailHash}`,
  /**
   * What an event is about (`shared/events/event.ts`): one small item per event and transaction or
   * invoice it carries, written in the event's transaction, in the event's partition (so its key is a
   * function of the two ids alone: a replayed write puts the same item again, never a second one),
   * and in the third access path under its object, by event id: one query lists an object's events,
   * newest first.
   */
  eventSubject: (scope: Scope, subjectId: string, eventId: string) => ({
    ...keys.child(scope, eventId, "subject", subjectId),
    gsi3pk: keys.subjectEventsPartition(scope, subjectId),
    gsi3sk: eventId,
  }),
  subjectEventsPartition: (scope: Scope, subjectId: string) => `${scope}#${subjectId}#events`,
  /** Every partition of a business day's lines: its shards, and the one day partition of before. */
  settlementDayPartitions: (scope: Scope, day: string): string[] => [
    ...Array.from({ length: SETTLEMENT_SHARDS }, (_, shard) => `${keys.settlementDay(scope, day)}#${shard}`),
    keys.settlementDay(scope, day),
  ],
  settlementDay: (scope: Scope, day: string) => `${scope}#settlement#${day}`,
  /**
   * How far the daily close has read a provider configuration's payouts (`shared/payouts/providers.ts`),
   * beside the environment's configurations.
   */
  providerPayoutCursor: (scope: Scope, configurationId: string): ItemKey => ({
    pk: scope,
    sk: `payout-cursor#${configurationId}`,
  }),
  /** An item of a payout, in its payout's partition (`keys.resource` of the payout), by id. */
  payoutItem: (scope: Scope, payoutId: string, itemId: string): ItemKey =>
    keys.child(scope, payoutId, "payout-item", itemId),
  /**
   * A job of the local scheduler (`shared/scheduling/table.ts`; EventBridge Scheduler keeps them in
   * AWS), addressed by its schedule name, which is unique across environments (derived from an id).
   */
  scheduledJob: (name: string): ItemKey => ({ pk: `scheduled-job#${name}`, sk: "scheduled-job" }),
  /**
   * Where a job the local stack fires waits in the listing index: one partition of every waiting
   * job, sorted by the (real) time it fires, so one query `<= now` finds the ones to run; jobs out
   * of retries move to the dead partition.
   */
  scheduledJobDue: (state: "waiting" | "dead", dueAt: string, name: string) => ({
    gsi1pk: `scheduled-jobs#${state}`,
    gsi1sk: `${dueAt}#${name}`,
  }),
  scheduledJobPartition: (state: "waiting" | "dead") => `scheduled-jobs#${state}`,
  /**
   * Every job of an environment in the second access path, by business due time: what a sandbox
   * clock's advance runs (`shared/sandbox/clock.ts`), whichever scheduler fires the jobs.
   */
  environmentJob: (scope: Scope, dueAt: string, name: string) => ({
    gsi2pk: `${scope}#jobs`,
    gsi2sk: `${dueAt}#${name}`,
  }),
  environmentJobsPartition: (scope: Scope) => `${scope}#jobs`,
  /**
   * An `Idempotency-Key` of an environment, apart per credential kind: no key a browser sends with
   * the public key can be the key of a request from the merchant's server (the kinds hold no `#`).
   */
  idempotency: (scope: Scope, credential: CredentialKind, key: string) => ({
    pk: `${scope}#idempotency#${credential}#${key}`,
    sk: IDEMPOTENCY_SORT_KEY,
  }),
  /**
   * Webhook items live in their event's partition, so one query reads an event's whole delivery
   * history. A delivery is one event to one destination (`project` or `invoice`) in one round:
   * `initial` for the event itself, or the id of a resend. Its key is a function of those three,
   * so a stream record seen twice finds the delivery it already recorded.
   */
  webhookDelivery: (scope: Scope, eventId: string, round: string, destination: string): ItemKey =>
    keys.child(scope, eventId, "webhook-delivery", `${round}#${destination}`),
  /** One attempt of a delivery: one POST and its outcome (`wh_…`, in time order). */
  webhookAttempt: (scope: Scope, eventId: string, attemptId: string): ItemKey =>
    keys.child(scope, eventId, "webhook-attempt", attemptId),
  /** A request to deliver the event again (`whr_…`): the stream turns it into a round of deliveries. */
  webhookResend: (scope: Scope, eventId: string, resendId: string): ItemKey =>
    keys.child(scope, eventId, "webhook-resend", resendId),
};
