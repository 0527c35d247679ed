import { keys } from "../db/keys.ts";
import { type Versioned, versionedStore } from "../db/versioned.ts";
import type { Product } from "./product.ts";

/**
 * Table access for products: one item per product (`keys.resource`), listed and counted while it
 * exists. Every change is conditional on the version read; deleting keeps the item out of the
 * listing index and the count, with `deleted_at` set (`shared/db/versioned.ts`).
 */
const products = versionedStore<Product>({
  entity: "product",
  key: keys.resource,
  gone: (product) => product.deleted_at !== null,
});

export type VersionedProduct = Versioned<Product>;

export const insertProduct = products.insert;
export const findProduct = products.find;
export const listProducts = products.list;
/** Replaces a product read at its version (deleting it when `deleted_at` is set). */
export const replaceProduct = products.replace;
/** The check, for the transaction that makes an invoice from a product, that it is still the version copied. */
export const productUnchanged = products.unchanged;
