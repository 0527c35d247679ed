import { GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import {
  conditionFailedItem,
  failedConditions,
  type TransactItem,
  transactWrite,
} from "../db/transactions.ts";
import type { Customer } from "./customer.ts";
import type { CustomerFields } from "./schema.ts";

/** Table access for customers. A customer is one item; what it owns shares its partition. */
const ENTITY = "customer";
const TOKEN_KIND = "token";

/** Item attributes that are keys or bookkeeping, not part of the customer. */
function fromItem(item: Record<string, unknown>): Customer {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...customer } = item;
  return customer as unknown as Customer;
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
    ...alsoWrite,
  ]);
}

export async function findCustomer(scope: Scope, id: string): Promise<Customer | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

/** The customer and its tokens in one query: they share a partition. */
export async function findCustomerWithTokens(
  scope: Scope,
  id: string,
): Promise<{ customer: Customer; tokens: Record<string, unknown>[] } | undefined> {
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
  return { customer: fromItem(item), tokens };
}

export type UpdateOutcome = { updated: Customer } | { notFound: true } | { currencyConflict: string };

/**
 * Applies the changes in one conditional write. `currency` is immutable once set, checked in the
 * write's condition so that a concurrent first payment cannot be overwritten.
 */
export async function updateCustomer(
  scope: Scope,
  id: string,
  changes: Partial<CustomerFields>,
  now: Date,
): Promise<UpdateOutcome> {
  const names: Record<string, string> = { "#updated_at": "updated_at", "#version": "version" };
  const values: Record<string, unknown> = { ":updated_at": now.toISOString(), ":one": 1 };
  const assignments = ["#updated_at = :updated_at", "#version = #version + :one"];
  for (const [field, value] of Object.entries(changes)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    assignments.push(`#${field} = :${field}`);
  }
  let condition = "attribute_exists(pk)";
  if (changes.currency) {
    condition += " AND (attribute_type(#currency, :nullType) OR #currency = :currency)";
    values[":nullType"] = "NULL";
  }
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.resource(scope, id),
        UpdateExpression: `SET ${assignments.join(", ")}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { updated: fromItem(Attributes ?? {}) };
  } catch (error) {
    const existing = conditionFailedItem(error);
    if (existing === null) throw error;
    if (existing?.type !== ENTITY) return { notFound: true };
    return { currencyConflict: String(existing.currency) };
  }
}

/** Deletes the customer and counts it out, atomically; false when it was not there. */
export async function deleteCustomer(scope: Scope, id: string): Promise<boolean> {
  try {
    await transactWrite([
      {
        Delete: {
          TableName: config.tableName,
          Key: keys.resource(scope, id),
          ConditionExpression: "#type = :type",
          ExpressionAttributeNames: { "#type": "type" },
          ExpressionAttributeValues: { ":type": ENTITY },
        },
      },
      countChange(scope, ENTITY, -1),
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return false;
    throw error;
  }
}

export async function listCustomers(scope: Scope, page: PageRequest): Promise<Page<Customer>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map(fromItem) };
}
