import { randomBytes } from "node:crypto";
import { checkoutKeyMatches } from "../checkout/link.ts";
import { checkoutNotFoundPage } from "../checkout/page.ts";
import { config } from "../config.ts";
import { IdempotencyKeyTaken } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError } from "../http/errors.ts";
import { answerForTakenKey, claimInTheWrite, fingerprint } from "../http/idempotency.ts";
import type { HtmlReply } from "../http/reply.ts";
import { isEnvironmentProjectId, isId } from "../ids.ts";
import { findEnvironment } from "../projects/environment.ts";
import { productGonePage, productPage, toCheckout } from "./pay-page.ts";
import type { Product } from "./product.ts";
import { invoiceFromProduct } from "./service.ts";
import { findProduct } from "./store.ts";

/**
 * A product's payment link, `<API>/pay/{project_id}/{product_id}?key=…` (its `url`), reached without
 * credentials: the key (192 random bits, kept on the product) is what opens it, as an invoice's
 * checkout key does. An unknown environment or product and a missing or wrong key get the checkout's
 * own "Payment link not found" page; a deleted product's right link says it is no longer available.
 *
 * **A GET makes nothing.** Link previews (chat apps, social networks), mail scanners and crawlers
 * fetch every link they see, some several times: if opening the link made an invoice, each share
 * and each scan would leave unpaid invoices (and their count, and their listing) behind. So the GET
 * answers a page with the product and a "Pay" button; the button posts back to the link (POST, the
 * same path), which makes the invoice and answers 303 to its checkout page. The form carries a
 * random value of its visit: the same form posted twice (a double click, a resent post) makes one
 * invoice, and both go to its page.
 */
export const VISIT_PARAMETER = "visit";
const VISIT_PATTERN = /^[A-Za-z0-9_-]{22}$/;

interface OpenLink {
  caller: Caller;
  product: Product;
}

/** The environment and the product the link opens, or the page that answers it instead. */
async function openLink(projectId: string, productId: string, key: unknown): Promise<OpenLink | HtmlReply> {
  if (!isEnvironmentProjectId(projectId) || !isId("product", productId)) return checkoutNotFoundPage();
  const [environment, found] = await Promise.all([
    findEnvironment(projectId),
    findProduct(projectId, productId),
  ]);
  if (!environment || !found || !checkoutKeyMatches(found.value.link_key, key)) {
    return checkoutNotFoundPage();
  }
  if (found.value.deleted_at !== null) return productGonePage();
  return {
    caller: { projectId: environment.id, sandbox: environment.sandbox, environment },
    product: found.value,
  };
}

const linkPath = (product: Product) => `/pay/${product.project_id}/${product.id}`;

/** `GET /pay/{project_id}/{product_id}?key=…`: the product and its "Pay" button; nothing is made. */
export async function showProductLink(
  projectId: string,
  productId: string,
  key: unknown,
): Promise<HtmlReply> {
  const opened = await openLink(projectId, productId, key);
  if ("html" in opened) return opened;
  const { caller, product } = opened;
  return productPage({
    merchantName: caller.environment.name,
    sandbox: caller.sandbox,
    name: product.name,
    amount: product.amount,
    currency: product.currency,
    cancelUrl: product.cancel_url,
    action: `${config.apiUrl}${linkPath(product)}`,
    key: product.link_key,
    visit: randomBytes(16).toString("base64url"),
  });
}

/**
 * `POST /pay/{project_id}/{product_id}` (`key` and `visit` in the form, or `key` in the query): a new
 * invoice from the product, made as `POST /products/{id}/invoices` makes it, then 303 to its
 * checkout page. A visit's first invoice is stored under the visit in the same transaction, so a
 * second post of the same form goes to that invoice instead of making another.
 */
export async function payProductLink(
  projectId: string,
  productId: string,
  input: { key: unknown; visit: unknown; requestId: string },
): Promise<HtmlReply> {
  const opened = await openLink(projectId, productId, input.key);
  if ("html" in opened) return opened;
  const { caller, product } = opened;
  const visit =
    typeof input.visit === "string" && VISIT_PATTERN.test(input.visit)
      ? claimInTheWrite(
          caller.projectId,
          "public-key",
          `pay-link#${product.id}#${input.visit}`,
          fingerprint("POST", linkPath(product), {}),
          input.requestId,
        )
      : undefined;
  try {
    const invoice = await invoiceFromProduct(caller, product.id, (presented) =>
      visit ? [visit.completion({ statusCode: 303, body: JSON.stringify({ url: presented.url }) })] : [],
    );
    return toCheckout(invoice.url);
  } catch (error) {
    if (visit && error instanceof IdempotencyKeyTaken) {
      const taken = answerForTakenKey(visit, error.existing);
      if ("replay" in taken) return toCheckout((JSON.parse(taken.replay.body) as { url: string }).url);
      throw taken;
    }
    // Deleted between the read and the write: the link says so, as it will from now on.
    if (error instanceof ApiError && error.status === 404) return productGonePage();
    throw error;
  }
}
