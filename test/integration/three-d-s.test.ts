import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("3DS challenge test");
const client = local.sandbox;
const CHALLENGE_CARD = "4000000000000101";

let previousApiUrl: string | undefined;
beforeAll(() => {
  // The handlers run in this process: challenge links must point at this test's server.
  previousApiUrl = process.env.API_URL;
  process.env.API_URL = local.url;
});
afterAll(() => {
  if (previousApiUrl === undefined) delete process.env.API_URL;
  else process.env.API_URL = previousApiUrl;
});

/** An invoice paid with the challenge card: authorize answers with the challenge page's URL. */
async function challenged(fields: Record<string, unknown> = {}) {
  const card = await client.post("/cards", {
    number: CHALLENGE_CARD,
    exp_month: 12,
    exp_year: 2099,
    cvc2: "123",
  });
  expect(card.status).toBe(200);
  const invoice = await client.post("/invoices", {
    name: "Order",
    amount: "10.00",
    currency: "USD",
    ...fields,
  });
  expect(invoice.status).toBe(200);
  const invoiceId: string = invoice.body.invoice.id;
  const source: string = card.body.card.id;
  const auth = await client.post(`/invoices/${invoiceId}/authorize`, { source });
  expect(auth.status).toBe(200);
  expect(auth.body.transaction).toMatchObject({ status: "waiting", three_d_s_status: "pending" });
  expect(auth.body.customer_action.type).toBe("url");
  const url: string = auth.body.customer_action.value;
  return { invoiceId, source, url, transactionId: auth.body.transaction.id as string };
}

/** The shopper's browser: no credentials, a form post, redirects not followed. */
function answer(url: string, result: string) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `result=${encodeURIComponent(result)}`,
    redirect: "manual",
  });
}

describe("the sandbox 3DS challenge page", () => {
  it("is served on our own address as a self-contained, escaped, uncached HTML page with both answers", async () => {
    const { url } = await challenged({ name: `<script>alert("x")</script> & tea` });
    expect(url).toMatch(new RegExp(`^${local.url}/3ds/[A-Za-z0-9_-]{32}$`));

    const page = await fetch(url);
    const text = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const policy = page.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("form-action 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(text).toContain('<form method="post">');
    expect(text).toContain('<button type="submit" name="result" value="approved">Approve</button>');
    expect(text).toContain('<button type="submit" name="result" value="failed">Fail</button>');
    expect(text).toContain("10.00 USD");
    expect(text).toContain("•••• 0101");
    expect(text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; tea");
    expect(text).not.toContain("<script>");
    expect(text).not.toMatch(/(src|href)=/);
  });

  it("records an approval once; authorizing again then succeeds and the capture works", async () => {
    const { invoiceId, source, url, transactionId } = await challenged();

    const approved = await answer(url, "approved");
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("You can close this page.");

    expect((await fetch(url)).status).toBe(404);
    const again = await answer(url, "failed");
    expect(again.status).toBe(404);
    expect(again.headers.get("content-type")).toBe("text/html; charset=utf-8");

    const auth = await client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(auth.status).toBe(200);
    expect(auth.body.customer_action).toEqual({});
    expect(auth.body.transaction).toMatchObject({
      id: transactionId,
      status: "authorized",
      three_d_s_status: "challenge-passed",
    });
    const capture = await client.post(`/invoices/${invoiceId}/capture`, {});
    expect(capture.status).toBe(200);
    expect(capture.body.transaction.status).toBe("completed");
  });

  it("records a failure; authorizing again is declined with card.failed-three-d-s and recorded as failed", async () => {
    const { invoiceId, source, url } = await challenged();
    expect((await answer(url, "failed")).status).toBe(200);

    const auth = await client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(auth.status).toBe(410);
    expect(auth.body.error_type).toBe("card.failed-three-d-s");
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({
      status: "failed",
      error_code: "card.failed-three-d-s",
      three_d_s_status: "failed",
    });
  });

  it("sends the shopper back to the invoice's return_url after answering", async () => {
    const { url } = await challenged({ return_url: "https://shop.example.com/done?order=7" });
    const policy = (await fetch(url)).headers.get("content-security-policy");
    expect(policy).toContain("form-action 'self' https://shop.example.com");
    const approved = await answer(url, "approved");
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe("https://shop.example.com/done?order=7");
  });

  it("answers 404 for an unknown token and 400 for an answer that is neither", async () => {
    const unknown = await fetch(`${local.url}/3ds/${"x".repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("Challenge not found");
    const { url } = await challenged();
    expect((await answer(url, "maybe")).status).toBe(400);
    // Still open: the invalid answer recorded nothing.
    expect((await fetch(url)).status).toBe(200);
  });

  it("needs no credentials, and credentials change nothing", async () => {
    const { url } = await challenged();
    const withCredentials = await api(local.url, local.project.sandbox).get(new URL(url).pathname);
    expect(withCredentials.status).toBe(200);
  });
});
