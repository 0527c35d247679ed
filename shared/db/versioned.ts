import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "./client.ts";
import { countChange } from "./counters.ts";
import { type ItemKey, keys, type ListedEntity, type Scope } from "./keys.ts";
import { type Page, type PageRequest, queryPage } from "./listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "./transactions.ts";

/**
 * The table access of a resource kept as one versioned item, listed and counted while it lives
 * (plans, products): every change is a put conditional on the version read, and ending it (`gone`)
 * takes it out of the listing index (which is sparse) and the count, for good, its item kept.
 */
export interface Versioned<T> {
  value: T;
  version: number;
}

export interface VersionedStore<T> {
  /** Stores a new one; `duplicate` when the environment has (or had) one with its id. */
  insert(value: T, alsoWrite: TransactItem[]): Promise<"created" | "duplicate">;
  /** One of the environment's, ended or not (a strongly consistent read). */
  find(scope: Scope, id: string): Promise<Versioned<T> | undefined>;
  list(scope: Scope, page: PageRequest): Promise<Page<T>>;
  /** Replaces one read at `version`; `changed` when another request changed or ended it first. */
  replace(current: Versioned<T>, next: T, alsoWrite: TransactItem[]): Promise<"replaced" | "changed">;
  /** A check, for another write's transaction, that it is still the version read. */
  unchanged(current: Versioned<T>): TransactItem;
  /** An item as read from the table (a `batchGet`), as a value. */
  fromItem(item: Record<string, unknown>): T;
}

export function versionedStore<T extends { id: string; project_id: string }>(options: {
  entity: ListedEntity;
  key: (scope: Scope, id: string) => ItemKey;
  /** Whether it has ended (a deleted product, an ended plan): no longer listed nor counted. */
  gone: (value: T) => boolean;
}): VersionedStore<T> {
  const { entity, key, gone } = options;
  const versioned = (item: Record<string, unknown>): Versioned<T> => {
    const { pk, sk, gsi1pk, gsi1sk, type, version, ...value } = item;
    return { value: value as unknown as T, version: Number(version) };
  };
  const item = (value: T, version: number) => ({
    ...key(value.project_id, value.id),
    ...(gone(value) ? {} : keys.listing(value.project_id, entity, value.id)),
    type: entity,
    version,
    ...value,
  });
  const versionIs = (version: number) => ({
    ConditionExpression: "#version = :version",
    ExpressionAttributeNames: { "#version": "version" },
    ExpressionAttributeValues: { ":version": version },
  });
  return {
    async insert(value, alsoWrite) {
      try {
        await transactWrite([
          {
            Put: {
              TableName: config.tableName,
              Item: item(value, 1),
              ConditionExpression: "attribute_not_exists(pk)",
            },
          },
          countChange(value.project_id, entity, 1),
          ...alsoWrite,
        ]);
        return "created";
      } catch (error) {
        if (failedConditions(error)?.includes(0)) return "duplicate";
        throw error;
      }
    },
    async find(scope, id) {
      const { Item } = await dynamo.send(
        new GetCommand({ TableName: config.tableName, Key: key(scope, id), ConsistentRead: true }),
      );
      return Item?.type === entity ? versioned(Item) : undefined;
    },
    async list(scope, page) {
      const result = await queryPage(scope, entity, page);
      return { ...result, items: result.items.map((found) => versioned(found).value) };
    },
    async replace(current, next, alsoWrite) {
      const ending = !gone(current.value) && gone(next);
      try {
        await transactWrite([
          {
            Put: {
              TableName: config.tableName,
              Item: item(next, current.version + 1),
              ...versionIs(current.version),
            },
          },
          ...(ending ? [countChange(next.project_id, entity, -1)] : []),
          ...alsoWrite,
        ]);
        return "replaced";
      } catch (error) {
        if (failedConditions(error)?.includes(0)) return "changed";
        throw error;
      }
    },
    unchanged(current) {
      return {
        ConditionCheck: {
          TableName: config.tableName,
          Key: key(current.value.project_id, current.value.id),
          ...versionIs(current.version),
        },
      };
    },
    fromItem: (found) => versioned(found).value,
  };
}
