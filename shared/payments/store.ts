import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { batchGet } from "../db/batch.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import {
  countIndexPartition,
  type Page,
  type PageRequest,
  queryIndexPage,
  queryPage,
} from "../db/listing.ts";
import { TABLE } from "../db/table.ts";
import { cancelledItem, failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import { conditionAttributes, type TransactionRecord, type TransactionStatus } from "./transaction.ts";

/**
 * Table access for transactions. A transaction is one item (`keys.resource`, type `transaction`),
 * listed and counted; its refunds and operations are lists in it. Every write of a transaction puts
 * the whole item on the condition that it is still the version read (and in the status the
 * transition leaves), so two requests can never both apply a transition; money conditions (capture
 * window, amount left to refund) are repeated in the condition on the minor-unit numbers kept beside
 * the decimal strings.
 */
const ENTITY = "transaction";
const INVOICE_ENTITY = "invoice";

export interface VersionedTransaction {
  record: TransactionRecord;
  version: number;
}

const CONDITION_ATTRIBUTES = [
  "authorized_minor",
  "captured_minor",
  "refundable_minor",
  "capture_deadline_ms",
];

function fromItem(item: Record<string, unknown>): VersionedTransaction {
  const { pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, gsi3pk, gsi3sk, type, version, ...rest } = item;
  for (const name of CONDITION_ATTRIBUTES) delete rest[name];
  return { record: rest as unknown as TransactionRecord, version: Number(version) };
}

function item(record: TransactionRecord, version: number) {
  const leaseUntil = record.pending ? new Date(record.pending.lease_until).toISOString() : undefined;
  return {
    ...keys.resource(record.project_id, record.id),
    ...keys.listing(record.project_id, ENTITY, record.id),
    // While an operation is reserved, the recovery job can find it once its lease is over.
    ...(leaseUntil ? keys.reservationDue(record.id, leaseUntil) : {}),
    // A customer's transactions are listed through the third access path.
    ...(record.customer_id ? keys.customerTransaction(record.project_id, record.customer_id, record.id) : {}),
    type: ENTITY,
    version,
    ...conditionAttributes(record),
    ...record,
  };
}

/** A transaction item as read from the table (`batchGet`), as a record. */
export const transactionFromItem = (item: Record<string, unknown>): TransactionRecord =>
  fromItem(item).record;

export async function findTransactionRecord(
  scope: Scope,
  id: string,
): Promise<VersionedTransaction | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

/**
 * Transactions of every environment whose reserved operation's lease ended before `now`, oldest
 * first, from one shard of the due-work index (eventually consistent: read the transaction again
 * before acting on it).
 */
export async function expiredReservations(
  shard: number,
  now: Date,
  limit: number,
  onlyScope?: Scope,
): Promise<Array<{ scope: Scope; id: string }>> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      IndexName: TABLE.indexes.gsi2.name,
      KeyConditionExpression: "#pk = :pk AND #sk < :now",
      ...(onlyScope ? { FilterExpression: "#project = :scope" } : {}),
      ExpressionAttributeNames: { "#pk": "gsi2pk", "#sk": "gsi2sk", "#project": "project_id" },
      ExpressionAttributeValues: {
        ":pk": keys.reservationPartition(shard),
        ":now": now.toISOString(),
        ...(onlyScope ? { ":scope": onlyScope } : {}),
      },
      ProjectionExpression: "#project, id",
      // The limit counts items before the filter: one environment's reservations are all read.
      ...(onlyScope ? {} : { Limit: limit }),
    }),
  );
  return Items.map((found) => ({ scope: String(found.project_id), id: String(found.id) }));
}

export async function listTransactions(scope: Scope, page: PageRequest): Promise<Page<TransactionRecord>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).record) };
}

export type CreateOutcome = "created" | "invoice-not-found" | { takenBy: string } | { failedCheck: number };

/**
 * Creates the invoice's transaction (already reserved for its authorization) and links the invoice
 * to it, atomically, on the condition that the invoice has no transaction yet: concurrent
 * authorizations of one invoice create one transaction. `checks` (card, token, customer currency)
 * commit with it; a failed one is reported by its index in `checks`. `alsoWrite` (unconditional: the
 * card's search entry) commits with it too.
 */
export async function insertTransaction(
  record: TransactionRecord,
  invoiceChanges: { incremental: boolean },
  checks: TransactItem[],
  alsoWrite: TransactItem[] = [],
): Promise<CreateOutcome> {
  const scope = record.project_id;
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: keys.resource(scope, record.invoice_id),
          UpdateExpression:
            "SET #transaction_id = :id, #incremental = :incremental, #version = #version + :one",
          ConditionExpression:
            "#type = :invoice AND (attribute_not_exists(#transaction_id) OR attribute_type(#transaction_id, :null))",
          ExpressionAttributeNames: {
            "#transaction_id": "transaction_id",
            "#incremental": "incremental",
            "#version": "version",
            "#type": "type",
          },
          ExpressionAttributeValues: {
            ":id": record.id,
            ":incremental": invoiceChanges.incremental,
            ":one": 1,
            ":invoice": INVOICE_ENTITY,
            ":null": "NULL",
          },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      {
        Put: {
          TableName: config.tableName,
          Item: item(record, 1),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      countChange(scope, ENTITY, 1),
      ...checks,
      ...alsoWrite,
    ]);
    return "created";
  } catch (error) {
    const failed = failedConditions(error);
    if (!failed) throw error;
    if (failed.includes(0)) {
      const invoice = cancelledItem(error, 0);
      if (invoice?.type !== INVOICE_ENTITY) return "invoice-not-found";
      return { takenBy: String(invoice.transaction_id) };
    }
    const check = failed.find((index) => index >= 3);
    if (check !== undefined) return { failedCheck: check - 3 };
    throw error;
  }
}

/** What a transition requires of the stored transaction besides its version. */
export interface Expected {
  status: TransactionStatus;
  /** The reservation the writer holds; `null`: none may be held (or `takeover`). */
  pending: string | null;
  /**
   * When set, the reservation being taken over (`pending` is then ignored): expired, or held for the
   * provider's decision.
   */
  takeover?: { id: string; now: number };
  /** Capture: still within the capture window at `now`, and authorized at least `minor`. */
  capture?: { now: number; minor: number };
  /** Refund: at least `minor` left to refund. */
  refund?: { minor: number };
}

/** The write of one transition, for the transaction that also records its events. */
export function transitionWrite(
  current: VersionedTransaction,
  next: TransactionRecord,
  expected: Expected,
): TransactItem {
  const names: Record<string, string> = { "#version": "version", "#status": "status", "#pending": "pending" };
  const values: Record<string, unknown> = { ":version": current.version, ":status": expected.status };
  const conditions = ["#version = :version", "#status = :status"];
  if (expected.takeover) {
    names["#id"] = "id";
    names["#lease"] = "lease_until";
    values[":pendingId"] = expected.takeover.id;
    values[":now"] = expected.takeover.now;
    // Expired, or held for the provider's decision (which its webhook may settle at any time).
    names["#awaiting"] = "awaiting_provider_since";
    values[":null"] = "NULL";
    conditions.push(
      "#pending.#id = :pendingId",
      "(#pending.#lease < :now OR (attribute_exists(#pending.#awaiting) AND NOT attribute_type(#pending.#awaiting, :null)))",
    );
  } else if (expected.pending === null) {
    values[":null"] = "NULL";
    conditions.push("(attribute_not_exists(#pending) OR attribute_type(#pending, :null))");
  } else {
    names["#id"] = "id";
    values[":pendingId"] = expected.pending;
    conditions.push("#pending.#id = :pendingId");
  }
  if (expected.capture) {
    names["#deadline"] = "capture_deadline_ms";
    names["#authorized"] = "authorized_minor";
    values[":captureAt"] = expected.capture.now;
    values[":captureMinor"] = expected.capture.minor;
    conditions.push("#deadline > :captureAt", "#authorized >= :captureMinor");
  }
  if (expected.refund) {
    names["#refundable"] = "refundable_minor";
    values[":refundMinor"] = expected.refund.minor;
    conditions.push("#refundable >= :refundMinor");
  }
  return {
    Put: {
      TableName: config.tableName,
      Item: item(next, current.version + 1),
      ConditionExpression: conditions.join(" AND "),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Commits a transition (item 0) with what goes with it; `changed` when the transaction was no longer
 * as read (another request moved it first), `{ failedCheck }` when another item's condition failed.
 */
export async function commitTransition(
  items: TransactItem[],
): Promise<"committed" | "changed" | { failedCheck: number }> {
  try {
    await transactWrite(items);
    return "committed";
  } catch (error) {
    const failed = failedConditions(error);
    if (!failed || failed.length === 0) throw error;
    if (failed.includes(0)) return "changed";
    return { failedCheck: failed[0] as number };
  }
}

/**
 * The item that finds a transaction from its payment at a provider (`keys.gatewayPayment`), written
 * with the authorization: a provider's webhook names the payment, not our transaction. The sandbox
 * sends no webhooks and needs none.
 */
export function gatewayPaymentWrites(record: TransactionRecord): TransactItem[] {
  if (record.gateway_name === "sandbox" || !record.gateway_reference) return [];
  return [
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.gatewayPayment(
            record.project_id,
            record.gateway_configuration_id,
            record.gateway_reference,
          ),
          type: "gateway-payment",
          transaction_id: record.id,
        },
      },
    },
  ];
}

/** The transaction of a payment at a provider, through one of the environment's configurations. */
export async function findGatewayPayment(
  scope: Scope,
  configurationId: string,
  gatewayReference: string,
): Promise<string | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.gatewayPayment(scope, configurationId, gatewayReference),
    }),
  );
  return typeof Item?.transaction_id === "string" ? Item.transaction_id : undefined;
}

/** A customer token item (of its customer's partition), consistently read; undefined when absent. */
export async function findTokenItem(
  scope: Scope,
  customerId: string,
  tokenId: string,
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.child(scope, customerId, "token", tokenId),
      ConsistentRead: true,
    }),
  );
  return Item;
}

/**
 * A page of a customer's transactions, through the third access path (keys only): the page's keys,
 * then the transactions themselves in one batch read.
 */
export async function listCustomerTransactions(
  scope: Scope,
  customerId: string,
  page: PageRequest,
): Promise<Omit<Page<TransactionRecord>, "totalCount">> {
  const found = await queryIndexPage("gsi3", keys.customerTransactionsPartition(scope, customerId), page);
  const records = await transactionsByIds(
    scope,
    found.items.map((item) => String(item.gsi3sk)),
  );
  return { items: records, hasMore: found.hasMore };
}

/** The environment's transactions of these ids, in their order (one batch read; unknown ids left out). */
export async function transactionsByIds(scope: Scope, ids: readonly string[]): Promise<TransactionRecord[]> {
  const items = await batchGet(ids.map((id) => keys.resource(scope, id)));
  const byId = new Map(items.filter((item) => item.type === ENTITY).map((item) => [String(item.id), item]));
  return ids.flatMap((id) => {
    const item = byId.get(id);
    return item ? [transactionFromItem(item)] : [];
  });
}

/** How many transactions a customer has (a count of its keys in the third access path). */
export function countCustomerTransactions(scope: Scope, customerId: string): Promise<number> {
  return countIndexPartition("gsi3", keys.customerTransactionsPartition(scope, customerId));
}
