import { config } from "../config.ts";
import { cspHash, escapeHtml, pageHead } from "../http/html.ts";
import { type HtmlReply, html } from "../http/reply.ts";

/**
 * The pages of a product's payment link (`GET /pay/{project_id}/{product_id}?key=…`): what is paid
 * and one button, a form that posts back to the link, which makes the invoice and sends the browser
 * to its checkout page. No script; one inline style by hash; the form may post only to the API (and
 * be redirected only to the checkout pages); framed by nobody.
 */
const STYLE = [
  ":root{color-scheme:light;--ink:#1f2328;--muted:#59636e;--line:#d0d7de;--accent:#0b5cad}",
  "*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:var(--ink);background:#f6f8fa}",
  ".sandbox{margin:0;padding:.6rem 1rem;background:#fff4ce;border-bottom:1px solid #d4a72c;text-align:center}",
  "main{max-width:30rem;margin:1.5rem auto;padding:1.5rem;background:#fff;border:1px solid var(--line);border-radius:.6rem}",
  "@media (max-width:32rem){main{margin:0;border:0;border-radius:0;padding:1.25rem 1rem}}",
  ".merchant{margin:0;color:var(--muted)}h1{margin:.2rem 0 .6rem;font-size:1.4rem;line-height:1.3}",
  ".total{margin:0 0 1.5rem;font-size:1.1rem}.total strong{font-size:1.5rem}.note{color:var(--muted)}",
  "button{width:100%;padding:.85rem;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:.4rem;cursor:pointer}",
  "button:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}",
].join("");
const STYLE_HASH = cspHash(STYLE);

function policy(): string {
  // Browsers hold a form's redirect to `form-action` too: the checkout pages may be on another address.
  const formTargets = new Set([new URL(config.apiUrl).origin, new URL(config.checkoutUrl).origin]);
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `form-action ${[...formTargets].join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

function page(title: string, sandbox: boolean, content: string): string {
  return [
    ...pageHead(title, STYLE),
    "<body>",
    sandbox ? '<p class="sandbox"><strong>Sandbox</strong>: no real payment is made.</p>' : "",
    `<main>${content}</main>`,
    "</body>",
    "</html>",
  ].join("\n");
}

export interface ProductView {
  merchantName: string;
  sandbox: boolean;
  name: string;
  amount: string;
  currency: string;
  cancelUrl: string | null;
  /** Where the form posts: the link itself, without its key (which the form carries). */
  action: string;
  key: string;
  /** The visit's own random value: the same form posted twice makes one invoice. */
  visit: string;
}

/** The product and its one button. */
export function productPage(view: ProductView): HtmlReply {
  const price = `${escapeHtml(view.amount)} ${escapeHtml(view.currency)}`;
  const content = [
    `<p class="merchant">${escapeHtml(view.merchantName)}</p>`,
    `<h1>${escapeHtml(view.name)}</h1>`,
    `<p class="total">Total <strong>${price}</strong></p>`,
    `<form method="post" action="${escapeHtml(view.action)}">`,
    `<input type="hidden" name="key" value="${escapeHtml(view.key)}">`,
    `<input type="hidden" name="visit" value="${escapeHtml(view.visit)}">`,
    `<button type="submit">Pay ${price}</button>`,
    "</form>",
    '<p class="note">You give your card on the next page.</p>',
    view.cancelUrl ? `<p><a href="${escapeHtml(view.cancelUrl)}">Back to the merchant</a></p>` : "",
  ].join("\n");
  return html(200, page(`Pay ${view.name}`, view.sandbox, content), { contentSecurityPolicy: policy() });
}

/** The invoice is made: the browser goes to its checkout page (a 303, so a reload does not post again). */
export function toCheckout(checkoutUrl: string): HtmlReply {
  const content = `<p><a href="${escapeHtml(checkoutUrl)}">Continue to the payment page</a></p>`;
  return html(303, page("Continue to the payment page", false, content), {
    contentSecurityPolicy: policy(),
    location: checkoutUrl,
  });
}

/** The link is right but its product was deleted: it says so (404), and shows nothing of the product. */
export function productGonePage(): HtmlReply {
  const content = [
    "<h1>This payment link is no longer available</h1>",
    '<p class="note">The merchant has deactivated it: nothing can be paid here. Ask the merchant for a new link.</p>',
  ].join("\n");
  return html(404, page("Payment link no longer available", false, content), {
    contentSecurityPolicy: `default-src 'none'; style-src ${STYLE_HASH}; frame-ancestors 'none'; base-uri 'none'`,
  });
}
