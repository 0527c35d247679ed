import { CHECKOUT_KEY_PARAMETER, newCheckoutKey } from "../checkout/link.ts";
import { config } from "../config.ts";
import type { Caller } from "../http/auth.ts";
import { newId } from "../ids.ts";
import type { ProductFields } from "./schema.ts";

/**
 * A product: a priced, reusable payment link. Each visit of its `url` (or `POST
 * /products/{id}/invoices`) makes a new invoice of its name, amount, currency, metadata and URLs, so
 * one link can be paid any number of times, each payment on an invoice of its own.
 */
export interface Product {
  id: string;
  project_id: string;
  name: string;
  amount: string;
  currency: string;
  metadata: Record<string, string>;
  return_url: string | null;
  cancel_url: string | null;
  sandbox: boolean;
  created_at: string;
  updated_at: string;
  /**
   * The secret of the product's payment link (`url`), 192 random bits as an invoice's checkout key
   * (`shared/checkout/link.ts`): knowing the product's id is not enough to make invoices from it.
   */
  link_key: string;
  /**
   * When the product was deleted; null while it exists. A deleted product is kept (out of the
   * listing and the count) only so that its link can say it is no longer available.
   */
  deleted_at: string | null;
}

export function newProduct(caller: Caller, fields: ProductFields, now: Date): Product {
  const at = now.toISOString();
  return {
    id: newId("product"),
    project_id: caller.projectId,
    name: fields.name,
    amount: fields.amount,
    currency: fields.currency,
    metadata: fields.metadata ?? {},
    return_url: fields.return_url ?? null,
    cancel_url: fields.cancel_url ?? null,
    sandbox: caller.sandbox,
    created_at: at,
    updated_at: at,
    link_key: newCheckoutKey(),
    deleted_at: null,
  };
}

/**
 * The product's payment link: `<API>/pay/<environment id>/<product id>?key=<key>`, served by the API
 * without credentials (`pay.ts`); its visit makes a fresh invoice and goes to that invoice's checkout.
 */
export function productLink(product: Pick<Product, "id" | "project_id" | "link_key">): string {
  return `${config.apiUrl}/pay/${product.project_id}/${product.id}?${CHECKOUT_KEY_PARAMETER}=${product.link_key}`;
}

/** The product as the API shows it (the reference's Product shape). */
export function presentProduct(product: Product) {
  return {
    id: product.id,
    project_id: product.project_id,
    url: productLink(product),
    name: product.name,
    amount: product.amount,
    currency: product.currency,
    metadata: product.metadata,
    return_url: product.return_url,
    cancel_url: product.cancel_url,
    sandbox: product.sandbox,
    created_at: product.created_at,
  };
}

export type PresentedProduct = ReturnType<typeof presentProduct>;

/** What an invoice made from the product is created with (`POST /invoices`' own input). */
export function invoiceInputOf(product: Product) {
  return {
    name: product.name,
    amount: product.amount,
    currency: product.currency,
    metadata: product.metadata,
    return_url: product.return_url,
    cancel_url: product.cancel_url,
  };
}
