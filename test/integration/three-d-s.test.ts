import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { api, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("3DS challenge test");
const client = local.sandbox;
const CHALLENGE_CARD = "4000000000000101";

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
    // The web library opens it in a modal iframe on the merchant's page: any page may frame it (the
    // token in its address is the secret), so no X-Frame-Options either.
    expect(policy).toContain("frame-ancestors *");
    expect(page.headers.get("x-frame-options")).toBeNull();
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

  it("captures the amount the merchant asked for once the shopper, with the public key, completes the challenge", async () => {
    const card = await client.post("/cards", {
      number: CHALLENGE_CARD,
      exp_month: 12,
      exp_year: 2099,
      cvc2: "123",
    });
    const invoiceId: string = (
      await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" })
    ).body.invoice.id;
    // The merchant's server captures part of the invoice; the issuer asks for a challenge first.
    const asked = await client.post(`/invoices/${invoiceId}/capture`, {
      source: card.body.card.id,
      amount: "4.00",
    });
    expect(asked.body.customer_action.type).toBe("url");
    expect((await answer(asked.body.customer_action.value, "approved")).status).toBe(200);
    // The shopper's browser completes it with the public key, which sends no amount.
    const shopper = api(local.url, { project_id: local.project.sandbox.project_id, private_key: "" });
    const paid = await shopper.post(`/invoices/${invoiceId}/capture`, { source: card.body.card.id });
    expect(paid.status).toBe(200);
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({ status: "completed", authorized_amount: "10.00", captured_amount: "4.00" });
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

/** The web library's calls: the project id alone, `capture` with `enable_three_d_s_2`. */
function webLibrary() {
  return api(local.url, { ...local.project.sandbox, private_key: "" });
}

/** The inline script's hash, as the page's policy must allow it for a browser to run it. */
function scriptAllowed(page: string, policy: string): boolean {
  const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1];
  if (script === undefined) return false;
  const hash = createHash("sha256").update(script).digest("base64");
  return policy.includes(`script-src 'sha256-${hash}'`);
}

describe("3DS2 in a browser (the web library's fingerprint and challenge frames)", () => {
  async function webPayment(number: string) {
    const card = await webLibrary().post("/cards", {
      number,
      exp_month: "12",
      exp_year: "2099",
      cvc2: "123",
    });
    const invoice = await client.post("/invoices", { name: "Web order", amount: "12.00", currency: "EUR" });
    const invoiceId: string = invoice.body.invoice.id;
    const pay = (source: string) =>
      webLibrary().post(`/invoices/${invoiceId}/capture`, {
        source,
        enable_three_d_s_2: true,
        authorize_only: false,
        device: { request_origin: "web", app_color_depth: 24, app_screen_width: 1280 },
      });
    return { invoiceId, cardId: card.body.card.id as string, pay };
  }

  it("runs the fingerprint page, then the challenge page, and captures once the frames say so", async () => {
    const { invoiceId, cardId, pay } = await webPayment(CHALLENGE_CARD);
    const first = await pay(cardId);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      customer_action: {
        type: "fingerprint",
        value: expect.stringMatching(/\/3ds\/[\w-]{32}\/fingerprint$/),
        metadata: {},
      },
    });

    // The hidden frame: a page that hands its parent the answer bound to its own address.
    const fingerprintUrl: string = first.body.customer_action.value;
    const page = await fetch(fingerprintUrl);
    const html = await page.text();
    const policy = page.headers.get("content-security-policy") ?? "";
    expect(page.status).toBe(200);
    expect(policy).toContain("frame-ancestors *");
    expect(scriptAllowed(html, policy)).toBe(true);
    expect(html).toContain('action:"success"');
    const answer = /data-answer="(gway_req_[A-Za-z0-9+/=]+)"/.exec(html)?.[1] ?? "";
    const envelope = JSON.parse(Buffer.from(answer.slice("gway_req_".length), "base64").toString("utf8"));
    expect(envelope).toEqual({ body: '{"threeDSCompInd":"Y"}', url: fingerprintUrl });

    const second = await pay(answer);
    expect(second.body.customer_action).toMatchObject({
      type: "url",
      value: expect.stringMatching(/\/3ds\/[\w-]{32}$/),
    });
    // The fingerprint round is over: its page is gone.
    expect((await fetch(fingerprintUrl)).status).toBe(404);

    // The modal frame: answered in a frame, the page tells its parent instead of leaving.
    const challengeUrl: string = second.body.customer_action.value;
    const answered = await fetch(challengeUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-dest": "iframe" },
      body: "result=approved",
      redirect: "manual",
    });
    const answeredHtml = await answered.text();
    expect(answered.status).toBe(200);
    expect(scriptAllowed(answeredHtml, answered.headers.get("content-security-policy") ?? "")).toBe(true);
    expect(answeredHtml).toContain('namespace:"processout.checkout"');

    // The library sends the card again after a `url` action: now captured.
    const third = await pay(cardId);
    expect(third.body).toEqual({ success: true });
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({
      status: "completed",
      three_d_s_status: "challenge-passed",
      captured_amount: "12.00",
    });
  });

  // The older libraries' envelope with a JSON body, and the current web library's form field.
  it.each([
    ["a JSON body", JSON.stringify({ threeDS2FingerprintTimeout: true })],
    ["the 3DS method's form field", 'threeDSMethodData={"threeDS2FingerprintTimeout":true}'],
  ])("falls back to the challenge when the fingerprint frame timed out (%s)", async (_, body) => {
    const { cardId, pay } = await webPayment("4000000000003063");
    const first = await pay(cardId);
    const timeout = `gway_req_${Buffer.from(
      JSON.stringify({
        gateway_configuration_id: "",
        method: "",
        url: first.body.customer_action.value,
        headers: {},
        body,
      }),
    ).toString("base64")}`;
    expect((await pay(timeout)).body.customer_action.type).toBe("url");
  });

  it("authorizes only, with the web library's options", async () => {
    const { invoiceId, cardId } = await webPayment("4242424242424242");
    const authorizeOnly = await webLibrary().post(`/invoices/${invoiceId}/capture`, {
      source: cardId,
      authorize_only: true,
      preferred_scheme: "visa",
      enable_three_d_s_2: true,
    });
    expect(authorizeOnly.body).toEqual({ success: true });
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({ status: "authorized", captured_amount: "0.00" });
  });
});
