import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { cancelledItem, failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import { emailEntryWrites } from "../search/entries.ts";
import { type Customer, MAX_TOKENS_PER_CUSTOMER } from "./customer.ts";
import type { CustomerFields } from "./schema.ts";

/**
 * Table access for customers. A customer is one item; what it owns shares its partition (its
 * tokens, `keys.child(…, "token", id)`). Every change is conditional on the version it was read
 * at, and every token creation and deletion changes the customer item in the same transaction
 * (its `token_count` and `default_token_id`, and its version), so a customer read with its tokens
 * can be deleted with exactly those tokens.
 */
const ENTITY = "customer";
const TOKEN_KIND = "token";

/** A customer item as read from the table, without the attributes that are keys or bookkeeping. */
export function customerFromItem(item: Record<string, unknown>): Customer {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...customer } = item;
  // Customers stored before tokens existed have neither attribute.
  return { default_token_id: null, token_count: 0, ...customer } as unknown as Customer;
}

/** A customer and the version it was read at: the condition of its next change. */
export interface VersionedCustomer {
  customer: Customer;
  version: number;
}

export async function insertCustomer(customer: Customer, alsoWrite: TransactItem[] = []): Promise<void> {
  await transactWrite([
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.resource(customer.project_id, customer.id),
          ...keys.listing(customer.project_id, ENTITY, customer.id),
          type: ENTITY,
          version: 1,
          ...customer,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    countChange(customer.project_id, ENTITY, 1),
    ...emailEntryWrites(customer, null, customer.email),
    ...alsoWrite,
  ]);
}

export async function findCustomer(scope: Scope, id: string): Promise<Customer | undefined> {
  return (await findVersionedCustomer(scope, id))?.customer;
}

export async function findVersionedCustomer(
  scope: Scope,
  id: string,
): Promise<VersionedCustomer | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY
    ? { customer: customerFromItem(Item), version: Number(Item.version) }
    : undefined;
}

/** The customer (at its version) and its tokens (as stored) in one query: they share a partition. */
export async function findCustomerWithTokens(
  scope: Scope,
  id: string,
): Promise<(VersionedCustomer & { tokens: Record<string, unknown>[] }) | undefined> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": keys.resource(scope, id).pk },
      ConsistentRead: true,
    }),
  );
  const item = Items.find((candidate) => candidate.sk === keys.resource(scope, id).sk);
  if (item?.type !== ENTITY) return undefined;
  const tokens = Items.filter((candidate) => String(candidate.sk).startsWith(keys.childPrefix(TOKEN_KIND)));
  return { customer: customerFromItem(item), version: Number(item.version), tokens };
}

/** Why a conditional change of a customer was refused: it is gone, or it changed since it was read. */
export type Refusal = "not-found" | "changed";

function refusal(error: unknown, index: number): Refusal | undefined {
  if (!failedConditions(error)?.includes(index)) return undefined;
  return cancelledItem(error, index)?.type === ENTITY ? "changed" : "not-found";
}

const AT_VERSION = "#type = :customer AND #version = :version";

/** Writes the changed fields of a customer read at `version`, if it is still at that version. */
export async function updateCustomer(
  current: VersionedCustomer,
  changes: Partial<CustomerFields>,
  now: Date,
  alsoWrite: TransactItem[] = [],
): Promise<"updated" | Refusal> {
  const { customer, version } = current;
  const names: Record<string, string> = {
    "#type": "type",
    "#version": "version",
    "#updated_at": "updated_at",
  };
  const values: Record<string, unknown> = {
    ":customer": ENTITY,
    ":version": version,
    ":next": version + 1,
    ":updated_at": now.toISOString(),
  };
  const assignments = ["#version = :next", "#updated_at = :updated_at"];
  for (const [field, value] of Object.entries(changes)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    assignments.push(`#${field} = :${field}`);
  }
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: keys.resource(customer.project_id, customer.id),
          UpdateExpression: `SET ${assignments.join(", ")}`,
          ConditionExpression: AT_VERSION,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      // The email's search entry moves with it, on the version read (`shared/search`).
      ...(changes.email !== undefined
        ? emailEntryWrites(customer, customer.email, changes.email ?? null)
        : []),
      ...alsoWrite,
    ]);
    return "updated";
  } catch (error) {
    const refused = refusal(error, 0);
    if (refused) return refused;
    throw error;
  }
}

/**
 * Deletes a customer read at `version` and counts it out, with `alsoWrite` (the deletion of the
 * tokens read with it, the events), atomically: a token created or deleted since changed the version.
 */
export async function deleteCustomer(
  current: VersionedCustomer,
  alsoWrite: TransactItem[] = [],
): Promise<"deleted" | Refusal> {
  const { customer, version } = current;
  try {
    await transactWrite([
      {
        Delete: {
          TableName: config.tableName,
          Key: keys.resource(customer.project_id, customer.id),
          ConditionExpression: AT_VERSION,
          ExpressionAttributeNames: { "#type": "type", "#version": "version" },
          ExpressionAttributeValues: { ":customer": ENTITY, ":version": version },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      countChange(customer.project_id, ENTITY, -1),
      ...emailEntryWrites(customer, customer.email, null),
      ...alsoWrite,
    ]);
    return "deleted";
  } catch (error) {
    const refused = refusal(error, 0);
    if (refused) return refused;
    throw error;
  }
}

export async function listCustomers(scope: Scope, page: PageRequest): Promise<Page<Customer>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map(customerFromItem) };
}

/**
 * How a new token changes its customer's default token:
 * `first`: the customer has none, the token becomes it (on the condition that there is still none);
 * `replace`: the merchant asked for it (`set_default`); `keep`: the customer keeps its default (on
 * the condition that it still has one).
 */
export type DefaultOnCreate = "first" | "replace" | "keep";

/**
 * The change of the customer item that comes with a new token, for the token's transaction: the
 * customer must exist and have room for it; its count, default and version follow.
 * Refused with the customer item (`ALL_OLD`) so that `tokenChangeRefusal` can say why.
 */
export function tokenAddedWrite(
  scope: Scope,
  customerId: string,
  tokenId: string,
  mode: DefaultOnCreate,
): TransactItem {
  const names: Record<string, string> = {
    "#type": "type",
    "#version": "version",
    "#token_count": "token_count",
  };
  const values: Record<string, unknown> = {
    ":customer": ENTITY,
    ":one": 1,
    ":zero": 0,
    ":max": MAX_TOKENS_PER_CUSTOMER,
  };
  const assignments = [
    "#token_count = if_not_exists(#token_count, :zero) + :one",
    "#version = #version + :one",
  ];
  let condition = "#type = :customer AND (attribute_not_exists(#token_count) OR #token_count < :max)";
  if (mode !== "keep") {
    names["#default_token_id"] = "default_token_id";
    values[":token"] = tokenId;
    assignments.push("#default_token_id = :token");
  }
  if (mode === "first") {
    condition += " AND (attribute_not_exists(#default_token_id) OR attribute_type(#default_token_id, :null))";
    values[":null"] = "NULL";
  }
  if (mode === "keep") {
    names["#default_token_id"] = "default_token_id";
    values[":string"] = "S";
    condition += " AND attribute_type(#default_token_id, :string)";
  }
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.resource(scope, customerId),
      UpdateExpression: `SET ${assignments.join(", ")}`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
  };
}

/**
 * The change of the customer item that comes with deleting one of its tokens: the count goes down,
 * and a default token that is deleted is cleared; on the condition that the token is (or is not) the
 * default, as it was when read.
 */
export function tokenRemovedWrite(
  scope: Scope,
  customerId: string,
  tokenId: string,
  wasDefault: boolean,
): TransactItem {
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.resource(scope, customerId),
      UpdateExpression: `SET #token_count = #token_count - :one, #version = #version + :one${
        wasDefault ? " REMOVE #default_token_id" : ""
      }`,
      ConditionExpression: wasDefault
        ? "#type = :customer AND #default_token_id = :token"
        : "#type = :customer AND (attribute_not_exists(#default_token_id) OR #default_token_id <> :token)",
      ExpressionAttributeNames: {
        "#type": "type",
        "#version": "version",
        "#token_count": "token_count",
        "#default_token_id": "default_token_id",
      },
      ExpressionAttributeValues: { ":customer": ENTITY, ":one": 1, ":token": tokenId },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
  };
}

/** Makes an existing token the customer's default (`set_default`), for the token's transaction. */
export function defaultTokenWrite(scope: Scope, customerId: string, tokenId: string): TransactItem {
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.resource(scope, customerId),
      UpdateExpression: "SET #default_token_id = :token, #version = #version + :one",
      ConditionExpression: "#type = :customer",
      ExpressionAttributeNames: {
        "#type": "type",
        "#version": "version",
        "#default_token_id": "default_token_id",
      },
      ExpressionAttributeValues: { ":customer": ENTITY, ":one": 1, ":token": tokenId },
      ReturnValuesOnConditionCheckFailure: "ALL_OLD",
    },
  };
}

/**
 * Why item `index` of a cancelled token transaction (one of the writes above) refused: the customer
 * is gone, has no room for another token, or its default token changed since it was read.
 */
export function tokenChangeRefusal(
  error: unknown,
  index: number,
  change: "added" | "removed" | "default",
): "customer-not-found" | "too-many-tokens" | "default-changed" | undefined {
  if (!failedConditions(error)?.includes(index)) return undefined;
  const found = cancelledItem(error, index);
  if (found?.type !== ENTITY) return "customer-not-found";
  if (change === "added" && Number(found.token_count ?? 0) >= MAX_TOKENS_PER_CUSTOMER)
    return "too-many-tokens";
  return "default-changed";
}
