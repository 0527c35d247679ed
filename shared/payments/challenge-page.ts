import { createHash } from "node:crypto";
import { type HtmlReply, html } from "../http/reply.ts";

/**
 * The HTML of the sandbox 3DS challenge page (`/3ds/{token}`): self-contained (one inline style,
 * allowed by its hash; no script, image or font), every value escaped, and a Content-Security-Policy
 * that lets the page load nothing else, be framed by nobody, and post its form only to itself (and,
 * when the invoice has a `return_url`, to that origin, which the answer redirects to).
 */
const STYLE = [
  "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1f2328}",
  "h1{font-size:1.3rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#59636e}",
  "dd{margin:0;font-weight:600}form{display:flex;gap:1rem;margin-top:2rem}",
  "button{flex:1;padding:.8rem;font-size:1rem;border-radius:.4rem;border:1px solid #1f2328;cursor:pointer}",
  "button[value=approved]{background:#1f883d;color:#fff;border-color:#1f883d}",
  "p.note{color:#59636e;font-size:.9rem}",
].join("");
const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");

function policy(returnUrl: string | null): string {
  const formTargets = ["'self'", ...(returnUrl ? [new URL(returnUrl).origin] : [])];
  return [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `form-action ${formTargets.join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] as string);
}

function page(title: string, content: string): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    `<body>${content}</body>`,
    "</html>",
  ].join("\n");
}

export interface ChallengeSummary {
  invoiceName: string;
  amount: string;
  currency: string;
  cardLast4: string;
  returnUrl: string | null;
}

/** The challenge: what is being paid and the two answers, posted back to this very address. */
export function challengePage(summary: ChallengeSummary): HtmlReply {
  const content = [
    "<h1>3-D Secure sandbox challenge</h1>",
    "<p>Approve or fail the authentication of this payment. No real bank is involved.</p>",
    "<dl>",
    `<dt>Payment</dt><dd>${escapeHtml(summary.invoiceName)}</dd>`,
    `<dt>Amount</dt><dd>${escapeHtml(summary.amount)} ${escapeHtml(summary.currency)}</dd>`,
    `<dt>Card</dt><dd>•••• ${escapeHtml(summary.cardLast4)}</dd>`,
    "</dl>",
    '<form method="post">',
    '<button type="submit" name="result" value="approved">Approve</button>',
    '<button type="submit" name="result" value="failed">Fail</button>',
    "</form>",
  ].join("\n");
  return html(200, page("3-D Secure challenge", content), {
    contentSecurityPolicy: policy(summary.returnUrl),
  });
}

/** The answer is recorded: back to the merchant when the invoice says where, else a closing note. */
export function answeredPage(result: "approved" | "failed", returnUrl: string | null): HtmlReply {
  const outcome = result === "approved" ? "approved" : "failed";
  const content = [
    `<h1>Authentication ${outcome}</h1>`,
    returnUrl
      ? `<p><a href="${escapeHtml(returnUrl)}">Return to the merchant</a></p>`
      : '<p class="note">You can close this page.</p>',
  ].join("\n");
  const body = page("3-D Secure challenge", content);
  if (returnUrl) return html(303, body, { contentSecurityPolicy: policy(returnUrl), location: returnUrl });
  return html(200, body, { contentSecurityPolicy: policy(null) });
}

/** An unknown token, or one whose challenge was already answered (each challenge is answered once). */
export function challengeNotFoundPage(): HtmlReply {
  const content = [
    "<h1>Challenge not found</h1>",
    '<p class="note">This 3-D Secure challenge does not exist or was already answered.</p>',
  ].join("\n");
  return html(404, page("Challenge not found", content), { contentSecurityPolicy: policy(null) });
}

/** The form was posted without one of its two answers. */
export function invalidAnswerPage(): HtmlReply {
  const content = [
    "<h1>Choose an answer</h1>",
    '<p class="note">Go back and press Approve or Fail.</p>',
  ].join("\n");
  return html(400, page("3-D Secure challenge", content), { contentSecurityPolicy: policy(null) });
}
