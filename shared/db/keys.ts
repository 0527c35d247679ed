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

export const COUNTER_SHARDS = 8;
export const RESERVATION_SHARDS = 8;

/** A stable shard of `id` among `shards` (the same id always lands on the same shard). */
export function shardOf(id: string, shards: number): number {
  let hash = 0;
  for (let index = 0; index < id.length; index++) hash = (hash * 31 + id.charCodeAt(index)) >>> 0;
  return hash % shards;
}
export const IDEMPOTENCY_SORT_KEY = "idempotency";

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
    pk: keys.settlementDay(scope, day),
    sk: `line#${lineId}`,
  }),
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
