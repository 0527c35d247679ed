import { GetCommand, QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { indexPartitionItems, type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Subscription } from "./subscription.ts";

/**
 * Table access for subscriptions: one item each (`keys.resource`), listed for the environment
 * (`gsi1`) and for its customer (`gsi2`), counted. Every change puts the whole item on the
 * condition that it is still the version read: two runs of a renewal can never both record it.
 */
const ENTITY = "subscription";

export interface VersionedSubscription {
  subscription: Subscription;
  version: number;
}

function fromItem(item: Record<string, unknown>): VersionedSubscription {
  const { pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, type, version, ...subscription } = item;
  return { subscription: subscription as unknown as Subscription, version: Number(version) };
}

function item(subscription: Subscription, version: number) {
  const scope = subscription.project_id;
  return {
    ...keys.resource(scope, subscription.id),
    ...keys.listing(scope, ENTITY, subscription.id),
    ...keys.customerSubscription(scope, subscription.customer_id, subscription.id),
    type: ENTITY,
    version,
    ...subscription,
  };
}

/** The write that stores a new subscription (with its count), for the transaction that makes it. */
export function subscriptionInserts(subscription: Subscription): TransactItem[] {
  return [
    {
      Put: {
        TableName: config.tableName,
        Item: item(subscription, 1),
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    countChange(subscription.project_id, ENTITY, 1),
  ];
}

export async function findSubscription(scope: Scope, id: string): Promise<VersionedSubscription | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

/** The write of a change: on the condition that the subscription is still at the version read. */
export function subscriptionReplace(current: VersionedSubscription, next: Subscription): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: item(next, current.version + 1),
      ConditionExpression: "#version = :version",
      ExpressionAttributeNames: { "#version": "version" },
      ExpressionAttributeValues: { ":version": current.version },
    },
  };
}

/** Commits a change (item 0) with what goes with it; `changed` when another change came first. */
export async function commitSubscriptionChange(items: TransactItem[]): Promise<"committed" | "changed"> {
  try {
    await transactWrite(items);
    return "committed";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "changed";
    throw error;
  }
}

export async function listSubscriptions(scope: Scope, page: PageRequest): Promise<Page<Subscription>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).subscription) };
}

/** Every subscription of a customer (a handful): one query of the second access path. */
export async function customerSubscriptions(scope: Scope, customerId: string): Promise<Subscription[]> {
  const items = await indexPartitionItems("gsi2", keys.customerSubscriptionsPartition(scope, customerId));
  return items.map((item) => fromItem(item).subscription);
}

const TRANSACTION_KIND = "transaction";

/**
 * The record that a transaction paid (or tried to pay) one of the subscription's iterations: an
 * item of the subscription's partition, written with the iteration's outcome (a put, so a repeat
 * writes the same item).
 */
export function subscriptionTransactionWrite(
  subscription: Subscription,
  transactionId: string,
): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: {
        ...keys.child(subscription.project_id, subscription.id, TRANSACTION_KIND, transactionId),
        type: "subscription-transaction",
        transaction_id: transactionId,
      },
    },
  };
}

/** The ids of the subscription's transactions (keys only, one query of its partition). */
export async function subscriptionTransactionIds(scope: Scope, subscriptionId: string): Promise<string[]> {
  const { pk } = keys.child(scope, subscriptionId, TRANSACTION_KIND, "");
  const prefix = keys.childPrefix(TRANSACTION_KIND);
  const ids: string[] = [];
  let startKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": pk, ":prefix": prefix },
        ProjectionExpression: "sk",
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of output.Items ?? []) ids.push(String(item.sk).slice(prefix.length));
    startKey = output.LastEvaluatedKey;
  } while (startKey);
  return ids;
}
