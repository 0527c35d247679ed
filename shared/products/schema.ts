import { INVOICE_LIMITS } from "../invoices/schema.ts";
import { paymentAmount } from "../money.ts";
import { currency, httpUrl, metadata, requiredText } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/**
 * Product inputs (`POST /products`, `PUT /products/{id}`): what every invoice made from the product
 * copies. The name has the invoice name's limit, so that a product always makes a valid invoice;
 * amount decimals are checked against the currency, and the whole product against the invoice
 * rules (`service.ts`). Unknown keys are dropped: client libraries echo read-only fields (`id`,
 * `url`, `sandbox`, …) on `PUT`, and send `null` for every key they do not set.
 */
export const PRODUCT_NAME_LENGTH = INVOICE_LIMITS.name;

const name = requiredText(PRODUCT_NAME_LENGTH);

export const createProductInput = z.object({
  name,
  amount: paymentAmount,
  currency,
  metadata,
  return_url: httpUrl,
  cancel_url: httpUrl,
});

export type ProductFields = z.output<typeof createProductInput>;

/** Every field may change; one not sent stays, `""` clears an optional one (the URLs). */
export const updateProductInput = z.object({
  name: z.optional(name),
  amount: z.optional(paymentAmount),
  currency: z.optional(currency),
  metadata,
  return_url: httpUrl,
  cancel_url: httpUrl,
});

export type ProductChanges = z.output<typeof updateProductInput>;
