import { cspHash, escapeHtml, pageHead } from "../http/html.ts";
import { type HtmlReply, html } from "../http/reply.ts";

/**
 * The HTML of the sandbox 3DS pages: the challenge (`/3ds/{token}`) and the browser's 3DS method
 * page (`/3ds/{token}/fingerprint`). Self-contained (one inline style and, where a page tells the
 * merchant's page it is done, one inline script, each allowed by its hash; no image or font), every
 * value escaped, and a Content-Security-Policy that lets a page load nothing else and post its form
 * only to itself (and, when the invoice has a `return_url`, to that origin, which the answer
 * redirects to).
 *
 * The pages may be framed by any page: the web client library opens the challenge in a modal iframe
 * and the fingerprint in a hidden one, on the merchant's own page, whose origin we cannot know. The
 * 192-bit token in the address is what protects them; only the page given the customer action has
 * it. In a frame, a page tells its parent it is done with `postMessage` (`{namespace:
 * "processout.checkout", action: "success"}`; the fingerprint adds `data`, the `gway_req_` answer),
 * as a JSON string, as the library waits for (it reads `JSON.parse(event.data)`); the message
 * carries nothing secret.
 */
const STYLE = [
  "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1f2328}",
  "h1{font-size:1.3rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#59636e}",
  "dd{margin:0;font-weight:600}form{display:flex;gap:1rem;margin-top:2rem}",
  "button{flex:1;padding:.8rem;font-size:1rem;border-radius:.4rem;border:1px solid #1f2328;cursor:pointer}",
  "button[value=approved]{background:#1f883d;color:#fff;border-color:#1f883d}",
  "p.note{color:#59636e;font-size:.9rem}",
].join("");

/**
 * Tells the framing page this step is done; the answer, if any, is read from the page (so the script
 * is the same for every page, and its hash too). Nothing happens when the page is not framed.
 */
const NOTIFY_PARENT = [
  'var e=document.getElementById("done");',
  "if(e&&window.parent!==window){",
  'var m={namespace:"processout.checkout",action:"success"};',
  "if(e.dataset.answer)m.data=e.dataset.answer;",
  'window.parent.postMessage(JSON.stringify(m),"*")}',
].join("");

const STYLE_HASH = cspHash(STYLE);
const NOTIFY_PARENT_HASH = cspHash(NOTIFY_PARENT);

function policy(returnUrl: string | null, withScript = false): string {
  const formTargets = ["'self'", ...(returnUrl ? [new URL(returnUrl).origin] : [])];
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    ...(withScript ? [`script-src ${NOTIFY_PARENT_HASH}`] : []),
    `form-action ${formTargets.join(" ")}`,
    "frame-ancestors *",
    "base-uri 'none'",
  ].join("; ");
}

function page(title: string, content: string, script = false): string {
  return [
    ...pageHead(title, STYLE),
    `<body>${content}${script ? `<script>${NOTIFY_PARENT}</script>` : ""}</body>`,
    "</html>",
  ].join("\n");
}

/** What the challenge authenticates: a payment (its invoice's name and amount) or a card's verification. */
export interface ChallengeSummary {
  payment: { invoiceName: string; amount: string; currency: string } | null;
  cardLast4: string;
  returnUrl: string | null;
}

/** The challenge: what is being paid and the two answers, posted back to this very address. */
export function challengePage(summary: ChallengeSummary): HtmlReply {
  const { payment } = summary;
  const content = [
    "<h1>3-D Secure sandbox challenge</h1>",
    `<p>Approve or fail the authentication of this ${payment ? "payment" : "card"}. No real bank is involved.</p>`,
    "<dl>",
    ...(payment
      ? [
          `<dt>Payment</dt><dd>${escapeHtml(payment.invoiceName)}</dd>`,
          `<dt>Amount</dt><dd>${escapeHtml(payment.amount)} ${escapeHtml(payment.currency)}</dd>`,
        ]
      : ["<dt>Verification</dt><dd>No payment: the card is saved for later payments</dd>"]),
    `<dt>Card</dt><dd>•••• ${escapeHtml(summary.cardLast4)}</dd>`,
    "</dl>",
    '<form method="post">',
    '<button type="submit" name="result" value="approved">Approve</button>',
    '<button type="submit" name="result" value="failed">Fail</button>',
    "</form>",
  ].join("\n");
  return threeDSPage(200, page("3-D Secure challenge", content), policy(summary.returnUrl));
}

const threeDSPage = (status: number, body: string, contentSecurityPolicy: string, location?: string) =>
  html(status, body, { contentSecurityPolicy, framable: true, ...(location ? { location } : {}) });

/**
 * The answer is recorded. In a frame (the web library's modal), the page tells its parent, which
 * sends the payment again; whatever the answer, the next authorization settles it (a failed one as
 * `card.failed-three-d-s`). Otherwise back to the merchant when the invoice says where, else a
 * closing note.
 */
export function answeredPage(
  result: "approved" | "failed",
  returnUrl: string | null,
  framed: boolean,
): HtmlReply {
  const outcome = result === "approved" ? "approved" : "failed";
  const content = [
    `<h1 id="done">Authentication ${outcome}</h1>`,
    returnUrl && !framed
      ? `<p><a href="${escapeHtml(returnUrl)}">Return to the merchant</a></p>`
      : '<p class="note">You can close this page.</p>',
  ].join("\n");
  const body = page("3-D Secure challenge", content, true);
  if (returnUrl && !framed) return threeDSPage(303, body, policy(returnUrl, true), returnUrl);
  return threeDSPage(200, body, policy(null, true));
}

/**
 * The cardholder is back from the provider's authentication page (`/3ds/{token}/return`): their
 * answer is recorded, and the next attempt asks the provider how it ended. As after the sandbox's
 * challenge: in a frame the page tells its parent; otherwise back to the merchant's `return_url`.
 */
export function returnedPage(returnUrl: string | null, framed: boolean): HtmlReply {
  const content = [
    '<h1 id="done">Authentication complete</h1>',
    returnUrl && !framed
      ? `<p><a href="${escapeHtml(returnUrl)}">Return to the merchant</a></p>`
      : '<p class="note">You can close this page.</p>',
  ].join("\n");
  const body = page("3-D Secure", content, true);
  if (returnUrl && !framed) return threeDSPage(303, body, policy(returnUrl, true), returnUrl);
  return threeDSPage(200, body, policy(null, true));
}

/**
 * The browser's 3DS method page (`customer_action` of type `fingerprint`), opened in a hidden frame:
 * the sandbox's ACS has nothing to collect, so the page completes at once and hands its parent the
 * `gway_req_` answer to send as the payment's next `source`.
 */
export function fingerprintPage(answer: string): HtmlReply {
  const content = [
    `<h1 id="done" data-answer="${escapeHtml(answer)}">3-D Secure device check complete</h1>`,
    '<p class="note">You can close this page.</p>',
  ].join("\n");
  return threeDSPage(200, page("3-D Secure device check", content, true), policy(null, true));
}

/** An unknown token, or one whose round was already answered (each round is answered once). */
export function challengeNotFoundPage(): HtmlReply {
  const content = [
    "<h1>Challenge not found</h1>",
    '<p class="note">This 3-D Secure challenge does not exist or was already answered.</p>',
  ].join("\n");
  return threeDSPage(404, page("Challenge not found", content), policy(null));
}

/** The form was posted without one of its two answers. */
export function invalidAnswerPage(): HtmlReply {
  const content = [
    "<h1>Choose an answer</h1>",
    '<p class="note">Go back and press Approve or Fail.</p>',
  ].join("\n");
  return threeDSPage(400, page("3-D Secure challenge", content), policy(null));
}
