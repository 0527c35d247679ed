import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { presentCustomer } from "../customers/customer.ts";
import { customerFromItem } from "../customers/store.ts";
import { batchGet } from "../db/batch.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import { queryIndexPage } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField } from "../http/errors.ts";
import { isId, sharedUlidId } from "../ids.ts";
import { transactionFromItem, transactionsByIds } from "../payments/store.ts";
import { presentTransaction, type TransactionRecord } from "../payments/transaction.ts";
import { emailHash, normalizedEmail } from "./entries.ts";

/** What a query was read as. */
export type SearchKind = "transaction_id" | "invoice_id" | "customer_id" | "card_last_4" | "email";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const MAX_QUERY_LENGTH = 254;

const SEARCHABLE =
  "is a transaction, invoice or customer id (tr_…, iv_…, cust_…), the last four digits of a card (4 digits), or a customer's email";

interface Found {
  transactions: TransactionRecord[];
  customers: ReturnType<typeof customerFromItem>[];
}

/**
 * `GET /search?query=&limit=`: a payment or a customer of the environment by id, the payments of a
 * card by its last four digits, or the customers of an email and their payments. Each kind reads its
 * search entries (`entries.ts`) in one query, newest first, then the objects by key.
 */
export async function search(caller: Caller, parameters: Record<string, unknown>) {
  const query = queryOf(parameters.query);
  const limit = limitOf(parameters.limit);
  const kind = kindOf(query);
  const scope = caller.projectId;
  const found = await FINDERS[kind](scope, query, limit);
  return {
    query,
    kind,
    transactions: found.transactions.map(presentTransaction),
    customers: found.customers.map(presentCustomer),
  };
}

function queryOf(value: unknown): string {
  const query = typeof value === "string" ? value.trim() : "";
  if (!query) throw invalidField("query", `is required: it ${SEARCHABLE}`);
  if (query.length > MAX_QUERY_LENGTH)
    throw invalidField("query", `is at most ${MAX_QUERY_LENGTH} characters: it ${SEARCHABLE}`);
  return query;
}

function limitOf(value: unknown): number {
  if (value === undefined || value === "") return DEFAULT_LIMIT;
  const limit = typeof value === "string" && /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    throw invalidField("limit", `must be an integer from 1 to ${MAX_LIMIT}`);
  return limit;
}

function kindOf(query: string): SearchKind {
  if (isId("transaction", query)) return "transaction_id";
  if (isId("invoice", query)) return "invoice_id";
  if (isId("customer", query)) return "customer_id";
  if (/^\d{4}$/.test(query)) return "card_last_4";
  if (query.includes("@")) return "email";
  throw invalidField("query", `cannot be searched: it ${SEARCHABLE}`);
}

const FINDERS: Record<SearchKind, (scope: Scope, query: string, limit: number) => Promise<Found>> = {
  transaction_id: async (scope, id) => ({
    transactions: await transactionsByIds(scope, [id]),
    customers: [],
  }),
  // The invoice's transaction shares its ULID (`sharedUlidId`): both read at once, the transaction
  // answered only when the invoice is this environment's and names it.
  invoice_id: async (scope, id) => {
    const transactionId = sharedUlidId("transaction", id);
    const items = await batchGet([keys.resource(scope, id), keys.resource(scope, transactionId)]);
    const invoice = items.find((item) => item.type === "invoice" && item.id === id);
    const transaction = items.find((item) => item.type === "transaction" && item.id === transactionId);
    if (!transaction || invoice?.transaction_id !== transactionId) return { transactions: [], customers: [] };
    return { transactions: [transactionFromItem(transaction)], customers: [] };
  },
  customer_id: async (scope, id) => ({ transactions: [], customers: await customersByIds(scope, [id]) }),
  card_last_4: async (scope, last4, limit) => {
    const entries = await newestEntries(keys.searchCardLast4Partition(scope, last4), limit);
    const records = await transactionsByIds(
      scope,
      entries.map((entry) => String(entry.transaction_id)),
    );
    const cardOf = new Map(entries.map((entry) => [String(entry.transaction_id), entry.card_id]));
    // An entry left behind by a transaction that moved to another card no longer finds it.
    return {
      transactions: records.filter((record) => record.card_id === cardOf.get(record.id)),
      customers: [],
    };
  },
  email: async (scope, email, limit) => {
    const entries = await newestEntries(keys.searchEmailPartition(scope, emailHash(email)), limit);
    const ids = entries.map((entry) => String(entry.customer_id));
    // The customers, and each one's newest transactions (its third access path), at once.
    const [customers, ...lists] = await Promise.all([
      customersByIds(scope, ids),
      ...ids.map((id) =>
        queryIndexPage("gsi3", keys.customerTransactionsPartition(scope, id), { limit, order: "desc" }),
      ),
    ]);
    const matching = customers.filter(
      (customer) => customer.email !== null && normalizedEmail(customer.email) === normalizedEmail(email),
    );
    const owners = new Set(matching.map((customer) => customer.id));
    const newest = lists
      .flatMap((list, index) => (owners.has(ids[index] as string) ? list.items : []))
      .map((item) => String(item.gsi3sk))
      .sort()
      .reverse()
      .slice(0, limit);
    return { transactions: await transactionsByIds(scope, newest), customers: matching };
  },
};

/** The newest `limit` entries of a search partition (its sort key is the object's id). */
async function newestEntries(partition: string, limit: number): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": partition },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items;
}

/** The environment's customers of these ids, in their order (unknown ones left out). */
async function customersByIds(scope: Scope, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const items = await batchGet(ids.map((id) => keys.resource(scope, id)));
  const byId = new Map(
    items.filter((item) => item.type === "customer").map((item) => [String(item.id), item]),
  );
  return ids.flatMap((id) => {
    const item = byId.get(id);
    return item ? [customerFromItem(item)] : [];
  });
}
