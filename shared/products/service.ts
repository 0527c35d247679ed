import { activityWrite } from "../activities/activity.ts";
import { clock } from "../clock.ts";
import type { PageRequest } from "../db/listing.ts";
import { failedConditions, type TransactItem } from "../db/transactions.ts";
import { eventWrite } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { busy, invalidField, notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import type { PresentedInvoice } from "../invoices/invoice.ts";
import { createInvoiceInput } from "../invoices/schema.ts";
import { createInvoice } from "../invoices/service.ts";
import { amountProblemIn } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import {
  invoiceInputOf,
  newProduct,
  type PresentedProduct,
  type Product,
  presentProduct,
} from "./product.ts";
import { createProductInput, type ProductChanges, updateProductInput } from "./schema.ts";
import {
  findProduct,
  insertProduct,
  listProducts,
  productUnchanged,
  replaceProduct,
  type VersionedProduct,
} from "./store.ts";

/** Products: create, read, list, change, delete, and make invoices from them. */

/** Attempts at making an invoice from a product that keeps changing under it. */
const INVOICE_ATTEMPTS = 3;

const concurrentChange = (id: string) =>
  busy("request.product.concurrent-update", `Product ${id} is being changed by another request.`);

/** `POST /products` */
export async function createProduct(
  caller: Caller,
  input: unknown,
  commit: (presented: PresentedProduct) => TransactItem[],
): Promise<PresentedProduct> {
  const fields = parseInput(createProductInput, input);
  const now = clock.now();
  const product = newProduct(caller, fields, now);
  checkMakesInvoices(product);
  const presented = presentProduct(product);
  await insertProduct(product, [
    ...eventWrite(caller.projectId, "product.created", { product: presented }, now),
    ...activityWrite(
      caller,
      "product.created",
      `Product "${product.name}" created (${product.amount} ${product.currency})`,
      subject(product),
      now,
    ),
    ...commit(presented),
  ]);
  return presented;
}

const subject = (product: Product) => ({ type: "product", id: product.id });

/** A product that exists (a deleted one is gone for the API, as an unknown one). */
export async function liveProduct(caller: Caller, id: string): Promise<VersionedProduct> {
  const found = isId("product", id) ? await findProduct(caller.projectId, id) : undefined;
  if (!found || found.value.deleted_at !== null) throw notFound("product", id);
  return found;
}

export async function getProduct(caller: Caller, id: string): Promise<PresentedProduct> {
  return presentProduct((await liveProduct(caller, id)).value);
}

export async function pageOfProducts(caller: Caller, page: PageRequest) {
  const result = await listProducts(caller.projectId, page);
  return { ...result, items: result.items.map(presentProduct) };
}

/**
 * `PUT /products/{id}`: the fields sent change, on the condition that the product is still the
 * version read (a concurrent change is a 409 to retry). Invoices made before keep what they copied.
 */
export async function changeProduct(caller: Caller, id: string, input: unknown): Promise<PresentedProduct> {
  const changes = parseInput(updateProductInput, input);
  const current = await liveProduct(caller, id);
  const now = clock.now();
  const next: Product = { ...current.value, ...sentOnly(changes), updated_at: now.toISOString() };
  checkMakesInvoices(next, changes);
  const presented = presentProduct(next);
  const outcome = await replaceProduct(current, next, [
    ...eventWrite(caller.projectId, "product.updated", { product: presented }, now),
    ...activityWrite(
      caller,
      "product.updated",
      `Product "${next.name}" updated (${Object.keys(sentOnly(changes)).join(", ") || "nothing sent"})`,
      subject(next),
      now,
    ),
  ]);
  if (outcome === "changed") throw concurrentChange(id);
  return presented;
}

/** `DELETE /products/{id}`: its link and its id stop working; invoices made from it stay. */
export async function deleteProduct(caller: Caller, id: string): Promise<void> {
  const current = await liveProduct(caller, id);
  const now = clock.now();
  const next: Product = { ...current.value, deleted_at: now.toISOString(), updated_at: now.toISOString() };
  const outcome = await replaceProduct(current, next, [
    ...eventWrite(caller.projectId, "product.deleted", { product: presentProduct(next) }, now),
    ...activityWrite(
      caller,
      "product.deleted",
      `Product "${next.name}" deleted: its link stops working`,
      subject(next),
      now,
    ),
  ]);
  if (outcome === "changed") throw concurrentChange(id);
}

/**
 * A new invoice from the product (`POST /products/{id}/invoices`, and each visit of its link): made
 * by `POST /invoices`' own `createInvoice` from the product's name, amount, currency, metadata and
 * URLs, in one transaction that also checks the product is still the version copied. A product
 * changed meanwhile is read again; one deleted meanwhile is a 404 and no invoice is made.
 */
export async function invoiceFromProduct(
  caller: Caller,
  id: string,
  commit: (presented: PresentedInvoice) => TransactItem[],
): Promise<PresentedInvoice> {
  for (let attempt = 1; ; attempt++) {
    const current = await liveProduct(caller, id);
    try {
      return await createInvoice(caller, invoiceInputOf(current.value), (presented) => [
        productUnchanged(current),
        ...commit(presented),
      ]);
    } catch (error) {
      // An invoice of a product names no customer or token: the one condition that can fail, beside
      // the Idempotency-Key's (an ApiError of its own), is the product's.
      if (!failedConditions(error)?.length) throw error;
      if (attempt >= INVOICE_ATTEMPTS) throw concurrentChange(id);
    }
  }
}

/**
 * A product must always make a valid invoice: its amount fits its currency, and its fields pass the
 * invoice's own rules (metadata keys the invoice reads, `taxes_amount` and `shipping_amount`, hold
 * numbers). A change of currency that no longer suits the amount kept names `currency`.
 */
function checkMakesInvoices(product: Product, changes?: ProductChanges): void {
  const problem = amountProblemIn(product.amount, product.currency);
  if (problem) {
    if (changes && changes.amount === undefined) {
      throw invalidField("currency", `cannot be ${product.currency}: amount ${problem}`);
    }
    throw invalidField("amount", problem);
  }
  parseInput(createInvoiceInput, invoiceInputOf(product));
}

/** The fields of a `PUT` that were sent (`""` having cleared a URL to null). */
function sentOnly(changes: ProductChanges): Partial<Product> {
  return Object.fromEntries(
    Object.entries(changes).filter(([, value]) => value !== undefined),
  ) as Partial<Product>;
}
