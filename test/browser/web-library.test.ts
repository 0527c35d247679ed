import { createServer, type Server } from "node:http";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../../lib/local/http-server.ts";
import { api, type Client, type RunningStack, startStack } from "../e2e/harness.ts";
import { type Browser, chromiumPath, launchChromium, NO_CHROMIUM, screenshots } from "./chromium.ts";
import { WEB_LIBRARY_SCRIPT } from "./web-library-page.ts";

/**
 * The web client library's requests, from a merchant's page of another origin (so every call is a
 * CORS request with a preflight), against `npm start`: what the library sends is accepted and what
 * it reads is there. See `web-library-page.ts`.
 */
if (!chromiumPath) console.warn(`Browser tests skipped: ${NO_CHROMIUM}`);

declare const window: Record<string, (...values: unknown[]) => Promise<Record<string, unknown>>> & {
  answers: Record<string, unknown>[];
};

describe.skipIf(!chromiumPath)("the web client library's requests from a merchant's page (npm start)", () => {
  let stack: RunningStack;
  let merchant: Client;
  let browser: Browser;
  let shop: { url: string; server: Server };
  let page: Page;
  const sent: Request[] = [];
  const shot = screenshots("web-library");

  beforeAll(async () => {
    [stack, shop] = await Promise.all([startStack(), startShop()]);
    merchant = api(stack.url, stack.credentials.sandbox);
    browser = launchChromium();
    page = await browser.page();
    page.on("request", (request) => {
      if (request.url().startsWith(stack.url)) sent.push(request);
    });
    await page.goto(shop.url);
    await page.evaluate(
      ([id, url]) => window.setUp?.(id, url),
      [stack.credentials.sandbox.project_id, stack.url],
    );
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    if (shop) await close(shop.server);
  });

  /** Calls one of the page's library functions; what it resolved with. */
  const call = async (name: string, ...values: unknown[]): Promise<Record<string, unknown>> =>
    (await page.evaluate(([fn, args]) => window[fn as string]?.(...(args as unknown[])), [
      name,
      values,
    ] as const)) ?? {};
  const tokenize = async (number: string) =>
    (await call("tokenize", number, 12, 2030, "123")).cardId as string;

  async function invoice() {
    const { body } = await merchant.post("/invoices", {
      name: "Library order",
      amount: "10.00",
      currency: "USD",
    });
    return body.invoice.id as string;
  }

  it("tokenizes a card with the project id alone, the library's headers and query string, after a preflight", async () => {
    const answer = await call("tokenize", "4242424242424242", 12, 2030, "123");

    expect(answer).toEqual({ cardId: expect.stringMatching(/^card_/) });
    const request = sent.find((candidate) => new URL(candidate.url()).pathname === "/cards");
    const headers = (await request?.allHeaders()) ?? {};
    expect(headers.authorization).toBe(`Basic ${btoa(`${stack.credentials.sandbox.project_id}:`)}`);
    expect(headers["api-version"]).toBe("1.3.0.0");
    expect(headers["x-processout-js-version"]).toBe("1.8.0");
    expect(headers.origin).toBe(shop.url);
    const query = new URL(request?.url() ?? "").searchParams;
    expect(query.get("legacyrequest")).toBe("true");
    expect(query.get("project_id")).toBe(stack.credentials.sandbox.project_id);
    expect(query.get("x-Authorization")).toBe(headers.authorization);
    expect(JSON.parse(request?.postData() ?? "{}")).toMatchObject({
      contact: {},
      exp_month: "12",
      device: { request_origin: "web" },
    });
    expect(stack.output()).toMatch(/OPTIONS \/cards\?legacyrequest=true\S* → 204/);
  });

  it("makeCardPayment without 3-D Secure: captures, and the answer has no customer_action for the library to perform", async () => {
    const invoiceId = await invoice();
    const cardId = await tokenize("4242424242424242");

    const outcome = await call("makeCardPayment", invoiceId, cardId, {});

    expect(outcome).toEqual({ success: invoiceId });
    const answers = await page.evaluate(() => window.answers);
    expect(answers.at(-1)).toEqual({ success: true });
    const transaction = (await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(transaction).toMatchObject({ status: "completed", captured_amount: "10.00" });
    await shot(page, "payment-done");
  });

  it("makeCardPayment with a 3-D Secure challenge approved in the library's modal frame", async () => {
    const invoiceId = await invoice();
    const cardId = await tokenize("4000000000000101");

    const outcome = call("makeCardPayment", invoiceId, cardId, {});
    const challenge = page.frameLocator("#processoutjs-action-modal iframe");
    await challenge.getByRole("button", { name: "Approve" }).waitFor();
    await shot(page, "challenge");
    await challenge.getByRole("button", { name: "Approve" }).click();

    expect(await outcome).toEqual({ success: invoiceId });
    const transaction = (await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(transaction.status).toBe("completed");
  });

  it("makeCardPayment with a failed challenge: reported to the library as an error", async () => {
    const invoiceId = await invoice();
    const cardId = await tokenize("4000000000000101");

    const outcome = call("makeCardPayment", invoiceId, cardId, {});
    await page
      .frameLocator("#processoutjs-action-modal iframe")
      .getByRole("button", { name: "Fail" })
      .click();

    expect((await outcome).error).toBeDefined();
    expect((await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction.status).toBe(
      "failed",
    );
  });

  it("makeCardToken: attaches and verifies the card on a pending customer token", async () => {
    const customer = (await merchant.post("/customers", { first_name: "Grace" })).body.customer.id;
    const token = (await merchant.post(`/customers/${customer}/tokens`, { verify: true })).body.token.id;
    const cardId = await tokenize("5555555555554444");

    const outcome = await call("makeCardToken", cardId, customer, token, { verify: true });

    expect(outcome).toEqual({ success: token });
    const stored = (await merchant.get(`/customers/${customer}/tokens/${token}`)).body.token;
    expect(stored).toMatchObject({ card_id: cardId, verification_status: "success" });
  });

  it("incrementAuthorizationAmount on an incremental authorization", async () => {
    const invoiceId = await invoice();
    const cardId = await tokenize("4242424242424242");
    expect(await call("makeIncrementalAuthorizationPayment", invoiceId, cardId, {})).toEqual({
      success: invoiceId,
    });

    expect(await call("incrementAuthorizationAmount", invoiceId, 5)).toEqual({ success: true });

    const transaction = (await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(transaction).toMatchObject({ status: "authorized", authorized_amount: "15.00" });
  });
});

/** The merchant's site: a page of its own origin that runs the library's requests. */
async function startShop(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === "/library.js") {
      response.writeHead(200, { "content-type": "text/javascript" }).end(WEB_LIBRARY_SCRIPT);
      return;
    }
    response
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(
        '<!doctype html><title>Shop</title><h1>Checkout at the shop</h1><script src="/library.js"></script>',
      );
  });
  return { url: `http://127.0.0.1:${await listen(server, 0)}`, server };
}
