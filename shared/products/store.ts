import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Product } from "./product.ts";

/**
 * Table access for products: one item per product (`keys.resource`), listed and counted while it
 * exists. Every change is conditional on the version read; deleting keeps the item out of the
 * listing index and the count, with `deleted_at` set.
 */
const ENTITY = "product";

export interface VersionedProduct {
  product: Product;
  version: number;
}

function fromItem(item: Record<string, unknown>): VersionedProduct {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...product } = item;
  return { product: product as unknown as Product, version: Number(version) };
}

function item(product: Product, version: number) {
  return {
    ...keys.resource(product.project_id, product.id),
    // A deleted product leaves the listing (the index is sparse): it is never listed again.
    ...(product.deleted_at === null ? keys.listing(product.project_id, ENTITY, product.id) : {}),
    type: ENTITY,
    version,
    ...product,
  };
}

export async function insertProduct(product: Product, alsoWrite: TransactItem[]): Promise<void> {
  await transactWrite([
    {
      Put: {
        TableName: config.tableName,
        Item: item(product, 1),
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    countChange(product.project_id, ENTITY, 1),
    ...alsoWrite,
  ]);
}

/** A product of the environment, deleted or not (a strongly consistent read). */
export async function findProduct(scope: Scope, id: string): Promise<VersionedProduct | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

export async function listProducts(scope: Scope, page: PageRequest): Promise<Page<Product>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).product) };
}

/**
 * Replaces a product read at `version` (deleting it when `next.deleted_at` is set, which also takes
 * it out of the count); `changed` when another request changed or deleted it first.
 */
export async function replaceProduct(
  current: VersionedProduct,
  next: Product,
  alsoWrite: TransactItem[],
): Promise<"replaced" | "changed"> {
  const deleting = current.product.deleted_at === null && next.deleted_at !== null;
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: item(next, current.version + 1),
          ConditionExpression: "#version = :version",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":version": current.version },
        },
      },
      ...(deleting ? [countChange(next.project_id, ENTITY, -1)] : []),
      ...alsoWrite,
    ]);
    return "replaced";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "changed";
    throw error;
  }
}

/**
 * The check, for the transaction that makes an invoice from a product, that the product is still
 * the version the invoice copied (not changed, not deleted meanwhile).
 */
export function productUnchanged(current: VersionedProduct): TransactItem {
  return {
    ConditionCheck: {
      TableName: config.tableName,
      Key: keys.resource(current.product.project_id, current.product.id),
      ConditionExpression: "#version = :version",
      ExpressionAttributeNames: { "#version": "version" },
      ExpressionAttributeValues: { ":version": current.version },
    },
  };
}
