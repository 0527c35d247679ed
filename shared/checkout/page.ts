import { cspHash, escapeHtml, pageHead } from "../http/html.ts";
import { type HtmlReply, html } from "../http/reply.ts";

/**
 * The hosted checkout page (`GET /checkout/{project_id}/{invoice_id}?key=…`): what is paid, and a
 * card form that the page's script (`/assets/checkout.js`, `shared/browser/checkout.ts`) checks,
 * tokenizes and pays with the public key. Its Content-Security-Policy lets it load only that script
 * and its one inline style (by hash), talk to and frame only the API (3-D Secure), post no form
 * anywhere, and be framed by nobody. Every value is escaped; nothing comes from another site.
 */
const STYLE = [
  ":root{color-scheme:light;--ink:#1f2328;--muted:#59636e;--line:#d0d7de;--accent:#0b5cad;--bad:#b42318}",
  "*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:var(--ink);background:#f6f8fa}",
  ".sandbox{margin:0;padding:.6rem 1rem;background:#fff4ce;border-bottom:1px solid #d4a72c;text-align:center}",
  "main{max-width:30rem;margin:1.5rem auto;padding:1.5rem;background:#fff;border:1px solid var(--line);border-radius:.6rem}",
  "@media (max-width:32rem){main{margin:0;border:0;border-radius:0;padding:1.25rem 1rem}}",
  ".merchant{margin:0;color:var(--muted)}h1{margin:.2rem 0 .6rem;font-size:1.4rem;line-height:1.3}",
  "h2{font-size:1.1rem;margin:1.5rem 0 .75rem}.total{margin:0;font-size:1.1rem}.total strong{font-size:1.5rem}",
  "table{width:100%;border-collapse:collapse;margin-top:1rem;font-size:.95rem}",
  "th,td{padding:.35rem 0;border-bottom:1px solid var(--line);text-align:left}",
  "td.amount,th.amount{text-align:right}td.quantity,th.quantity{text-align:center;width:3rem}",
  ".field{margin-bottom:1rem}label{display:block;font-weight:600;margin-bottom:.25rem}",
  ".hint{display:block;color:var(--muted);font-size:.875rem;font-weight:400}",
  "input{width:100%;padding:.65rem .75rem;font:inherit;border:1px solid #8c959f;border-radius:.4rem}",
  "input[aria-invalid=true]{border:2px solid var(--bad)}",
  "input:focus-visible,button:focus-visible,h2:focus-visible{outline:3px solid var(--accent);outline-offset:2px}",
  ".row{display:flex;gap:1rem}.row .field{flex:1;min-width:0}",
  ".error{margin:.3rem 0 0;color:var(--bad);font-size:.9rem}",
  ".failure{padding:.75rem;border:1px solid var(--bad);border-radius:.4rem;color:var(--bad);background:#fff5f5}",
  "button{width:100%;padding:.85rem;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:.4rem;cursor:pointer}",
  "button:disabled{opacity:.6;cursor:progress}#status{min-height:1.5rem;color:var(--muted)}",
  ".note{color:var(--muted)}",
].join("");
const STYLE_HASH = cspHash(STYLE);

function policy(apiOrigin: string): string {
  return [
    "default-src 'none'",
    `script-src ${apiOrigin}`,
    `style-src ${STYLE_HASH}`,
    `connect-src ${apiOrigin}`,
    `frame-src ${apiOrigin}`,
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

function page(title: string, sandbox: boolean, content: string, script?: string): string {
  return [
    ...pageHead(title, STYLE),
    "<body>",
    sandbox
      ? '<p class="sandbox"><strong>Sandbox</strong>: no real payment is made. Test card 4242 4242 4242 4242, any future date, any CVC.</p>'
      : "",
    `<main>${content}</main>`,
    script ? `<script type="module" src="${escapeHtml(script)}"></script>` : "",
    "</body>",
    "</html>",
  ].join("\n");
}

export interface CheckoutView {
  apiUrl: string;
  projectId: string;
  merchantName: string;
  sandbox: boolean;
  invoiceId: string;
  name: string;
  amount: string;
  currency: string;
  details: { name: string; quantity: number; amount: string }[];
  returnUrl: string | null;
}

const money = (amount: string, currency: string) => `${escapeHtml(amount)} ${escapeHtml(currency)}`;

function summary(view: CheckoutView): string {
  const rows = view.details.map(
    (detail) =>
      `<tr><td>${escapeHtml(detail.name)}</td><td class="quantity">${detail.quantity}</td>` +
      `<td class="amount">${money(detail.amount, view.currency)}</td></tr>`,
  );
  return [
    `<p class="merchant">${escapeHtml(view.merchantName)}</p>`,
    `<h1>${escapeHtml(view.name)}</h1>`,
    `<p class="total">Total <strong>${money(view.amount, view.currency)}</strong></p>`,
    rows.length > 0
      ? [
          "<table>",
          '<caption class="note">What you pay for</caption>',
          '<thead><tr><th scope="col">Item</th><th scope="col" class="quantity">Qty</th><th scope="col" class="amount">Amount</th></tr></thead>',
          `<tbody>${rows.join("")}</tbody>`,
          "</table>",
        ].join("")
      : "",
  ].join("\n");
}

function field(name: string, label: string, attributes: string, hint?: string): string {
  return [
    '<div class="field">',
    `<label for="${name}">${label}${hint ? ` <span class="hint">${hint}</span>` : ""}</label>`,
    `<input id="${name}" name="${name}" ${attributes} aria-describedby="${name}-error">`,
    `<p class="error" id="${name}-error" hidden></p>`,
    "</div>",
  ].join("");
}

/** The page with its card form. */
export function checkoutPage(view: CheckoutView): HtmlReply {
  const apiOrigin = new URL(view.apiUrl).origin;
  const data = [
    `data-api-url="${escapeHtml(view.apiUrl)}"`,
    `data-project-id="${escapeHtml(view.projectId)}"`,
    `data-invoice-id="${escapeHtml(view.invoiceId)}"`,
    `data-return-url="${escapeHtml(view.returnUrl ?? "")}"`,
  ].join(" ");
  const content = [
    summary(view),
    `<form id="pay" novalidate ${data}>`,
    "<h2>Pay by card</h2>",
    field("name", "Name on card", 'autocomplete="cc-name" required'),
    field("number", "Card number", 'inputmode="numeric" autocomplete="cc-number" required'),
    '<div class="row">',
    field("expiry", "Expiry date", 'inputmode="numeric" autocomplete="cc-exp" required', "MM/YY"),
    field(
      "cvc",
      "Security code",
      'inputmode="numeric" autocomplete="cc-csc" maxlength="4" required',
      "3 or 4 digits",
    ),
    "</div>",
    '<p class="failure" id="failure" role="alert" hidden></p>',
    `<button type="submit">Pay ${money(view.amount, view.currency)}</button>`,
    '<p id="status" role="status"></p>',
    "</form>",
    '<section id="paid" hidden>',
    '<h2 tabindex="-1">Payment received</h2>',
    `<p>Thank you: ${money(view.amount, view.currency)} paid to ${escapeHtml(view.merchantName)}. You can close this page.</p>`,
    "</section>",
    '<noscript><p class="failure">This page needs JavaScript to take your card safely.</p></noscript>',
  ].join("\n");
  return html(200, page(`Pay ${view.name}`, view.sandbox, content, `${view.apiUrl}/assets/checkout.js`), {
    contentSecurityPolicy: policy(apiOrigin),
  });
}

/** How an invoice's payment ended, as its page says it. */
export type SettledOutcome = "paid" | "declined" | "canceled" | "refunded";

/** The invoice's payment went as far as it goes (paid, declined, canceled, refunded): no form. */
export function settledPage(view: CheckoutView, outcome: SettledOutcome): HtmlReply {
  const askAgain = `<p class="note">Ask ${escapeHtml(view.merchantName)} for a new payment link.</p>`;
  const said: Record<SettledOutcome, string> = {
    paid: '<h2>This invoice is paid</h2><p class="note">Nothing more to do: you can close this page.</p>',
    declined: `<h2>This payment was declined</h2>${askAgain}`,
    canceled: `<h2>This payment was canceled</h2><p class="note">Nothing was charged.</p>${askAgain}`,
    refunded: '<h2>This invoice was paid, then refunded</h2><p class="note">Nothing more to do.</p>',
  };
  const content = [
    summary(view),
    said[outcome],
    view.returnUrl ? `<p><a href="${escapeHtml(view.returnUrl)}">Back to the merchant</a></p>` : "",
  ].join("\n");
  return html(200, page(view.name, view.sandbox, content), {
    contentSecurityPolicy: policy(new URL(view.apiUrl).origin),
  });
}

/** An unknown invoice, or a link without its key or with a wrong one: the same answer. */
export function checkoutNotFoundPage(): HtmlReply {
  const content = [
    "<h1>Payment link not found</h1>",
    '<p class="note">This payment link is not valid. Check that you opened the whole link, or ask the merchant for a new one.</p>',
  ].join("\n");
  return html(404, page("Payment link not found", false, content), {
    contentSecurityPolicy: `default-src 'none'; style-src ${STYLE_HASH}; frame-ancestors 'none'; base-uri 'none'`,
  });
}
