import { createServer, type Server } from "node:http";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../../lib/local/http-server.ts";
import { api, type Client, type RunningStack, startStack } from "../e2e/harness.ts";
import { eventually, type Receiver, startReceiver } from "../support/webhooks.ts";
import { type Browser, chromiumPath, launchChromium, NO_CHROMIUM, screenshots } from "./chromium.ts";

/**
 * The hosted checkout page in headless Chromium, on `npm start` (with its own DynamoDB Local, so
 * that its webhooks are its own): a shopper opens the invoice's `url`, types a card, pays. Each
 * step's screenshot is kept in `test/browser/screenshots/checkout/`.
 */
if (!chromiumPath) console.warn(`Browser tests skipped: ${NO_CHROMIUM}`);

const SHOPPER = { name: "Ada Lovelace", number: "4242 4242 4242 4242", expiry: "12/30", cvc: "123" };

describe.skipIf(!chromiumPath)("hosted checkout in Chromium (npm start)", () => {
  let stack: RunningStack;
  let merchant: Client;
  let browser: Browser;
  let webhooks: Receiver;
  let shop: { url: string; server: Server };
  const shot = screenshots("checkout");

  beforeAll(async () => {
    [stack, webhooks, shop] = await Promise.all([
      startStack({ dynamodb: "own" }),
      startReceiver("checkout"),
      startShop(),
    ]);
    merchant = api(stack.url, stack.credentials.sandbox);
    await merchant.put(`/projects/${stack.credentials.sandbox.project_id}`, { webhook_url: webhooks.url });
    browser = launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await webhooks?.close();
    if (shop) await close(shop.server);
  });

  async function invoice(fields: Record<string, unknown> = {}) {
    const { body } = await merchant.post("/invoices", {
      name: "Order 1042",
      amount: "24.50",
      currency: "EUR",
      details: [
        { name: "Darjeeling tea, 100 g", amount: "9.75", quantity: 2 },
        { name: "Shipping", amount: "5.00" },
      ],
      ...fields,
    });
    return body.invoice as { id: string; url: string };
  }

  const transactionOf = async (invoiceId: string) =>
    (await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction;

  it("is paid with a card by keyboard alone, shows the result, records the transaction and fires the webhook", async () => {
    const { id, url } = await invoice();
    const page = await browser.page({ viewport: { width: 1024, height: 900 } });

    await page.goto(url);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Order 1042");
    expect(await page.locator(".total").textContent()).toBe("Total 24.50 EUR");
    expect(await page.locator(".sandbox").textContent()).toContain("no real payment is made");
    await shot(page, "plain-opened");

    // Tab goes through the fields in reading order, then to the button.
    const order: string[] = [];
    for (let press = 0; press < 5; press++) {
      await page.keyboard.press("Tab");
      order.push(await focused(page));
    }
    expect(order).toEqual(["name", "number", "expiry", "cvc", "BUTTON"]);
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.type(SHOPPER.name);
    await page.keyboard.press("Tab");
    await page.keyboard.type("4242424242424242");
    await page.keyboard.press("Tab");
    await page.keyboard.type("1230");
    await page.keyboard.press("Tab");
    await page.keyboard.type(SHOPPER.cvc);
    expect(await page.inputValue("#number")).toBe(SHOPPER.number);
    expect(await page.inputValue("#expiry")).toBe(SHOPPER.expiry);
    await shot(page, "plain-filled");
    await page.keyboard.press("Enter");

    await page.locator("#paid h2").waitFor();
    expect(await page.locator(":focus").textContent()).toBe("Payment received");
    await shot(page, "plain-paid");
    const transaction = await transactionOf(id);
    expect(transaction).toMatchObject({ status: "completed", captured_amount: "24.50", currency: "EUR" });
    const names = await eventually(
      async () => {
        const ids = webhooks.requests.map((request) => JSON.parse(request.body).event_id as string);
        return Promise.all(ids.map(async (eventId) => (await merchant.get(`/events/${eventId}`)).body.event));
      },
      (events) => events.some((event) => event.name === "invoice.completed" && event.data.invoice.id === id),
    );
    expect(names.length).toBeGreaterThan(0);
  });

  it("shows each field's error beside it and moves the focus to the first one", async () => {
    const { url } = await invoice();
    const page = await browser.page({ viewport: { width: 1024, height: 900 } });
    await page.goto(url);

    await page.fill("#name", SHOPPER.name);
    await page.fill("#number", "4242 4242 4242 4241");
    await page.fill("#expiry", "01/20");
    await page.fill("#cvc", "12");
    await page.click("button[type=submit]");

    expect(await page.locator("#number-error").textContent()).toBe("This card number is not valid.");
    expect(await page.locator("#expiry-error").textContent()).toBe("This card has expired.");
    expect(await page.locator("#cvc-error").textContent()).toBe("The security code is 3 or 4 digits.");
    expect(await page.locator("#name-error").isHidden()).toBe(true);
    expect(await page.getAttribute("#number", "aria-invalid")).toBe("true");
    expect(await page.getAttribute("#number", "aria-describedby")).toBe("number-error");
    expect(await focused(page)).toBe("number");
    await shot(page, "errors-inline");
  });

  it("says why a declined card was declined, and offers nothing more for that invoice", async () => {
    const { id, url } = await invoice();
    const page = await browser.page({ viewport: { width: 1024, height: 900 } });
    await page.goto(url);

    await pay(page, { ...SHOPPER, number: "4000 0000 0000 0002" });

    const failure = page.locator("#failure[role=alert]");
    await failure.waitFor();
    expect(await failure.textContent()).toMatch(/declined.*ask the merchant for a new payment link/i);
    expect(await page.locator("button[type=submit]").isDisabled()).toBe(true);
    await shot(page, "declined");
    expect((await transactionOf(id)).status).toBe("failed");
    await page.reload();
    expect(await page.locator("h2").textContent()).toBe("This payment was declined");
    await shot(page, "declined-reopened");
  });

  it("runs a 3-D Secure challenge in a modal frame: approved, the invoice is paid", async () => {
    const { id, url } = await invoice();
    const page = await browser.page({ viewport: { width: 1024, height: 900 } });
    await page.goto(url);

    await pay(page, { ...SHOPPER, number: "4000 0000 0000 0101" });
    const challenge = page.frameLocator("dialog[open] iframe");
    await challenge.getByRole("button", { name: "Approve" }).waitFor();
    await shot(page, "3ds-challenge");
    await challenge.getByRole("button", { name: "Approve" }).click();

    await page.locator("#paid h2").waitFor();
    expect(await page.locator("dialog").count()).toBe(0);
    await shot(page, "3ds-approved-paid");
    expect((await transactionOf(id)).status).toBe("completed");
  });

  it("runs a 3-D Secure challenge in a modal frame: failed, the payment is refused", async () => {
    const { id, url } = await invoice();
    const page = await browser.page({ viewport: { width: 1024, height: 900 } });
    await page.goto(url);

    await pay(page, { ...SHOPPER, number: "4000 0000 0000 0101" });
    await page.frameLocator("dialog[open] iframe").getByRole("button", { name: "Fail" }).click();

    const failure = page.locator("#failure[role=alert]");
    await failure.waitFor();
    expect(await failure.textContent()).toContain("Your bank did not confirm the payment.");
    await shot(page, "3ds-failed");
    expect((await transactionOf(id)).status).toBe("failed");
  });

  it("works on a phone-sized screen, then goes back to the invoice's return_url", async () => {
    const returnUrl = `${shop.url}/thank-you?order=1042`;
    const { id, url } = await invoice({ return_url: returnUrl });
    const page = await browser.page({
      viewport: { width: 375, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await page.goto(url);

    // Nothing wider than the screen: no sideways scrolling.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    const button = await page.locator("button[type=submit]").boundingBox();
    expect(button?.width).toBeGreaterThan(300);
    await shot(page, "mobile-opened");

    await pay(page, SHOPPER, { tap: true });
    await page.waitForURL(returnUrl);
    await shot(page, "mobile-returned");
    expect((await transactionOf(id)).status).toBe("completed");
  });
});

/** The focused element's id, else its tag name. */
const focused = (page: Page) =>
  page.evaluate("document.activeElement.id || document.activeElement.tagName") as Promise<string>;

async function pay(page: Page, card: typeof SHOPPER, options: { tap?: boolean } = {}) {
  await page.fill("#name", card.name);
  await page.fill("#number", card.number);
  await page.fill("#expiry", card.expiry);
  await page.fill("#cvc", card.cvc);
  if (options.tap) await page.tap("button[type=submit]");
  else await page.click("button[type=submit]");
}

/** The merchant's site, where `return_url` leads. */
async function startShop(): Promise<{ url: string; server: Server }> {
  const server = createServer((_request, response) => {
    response
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end('<!doctype html><meta name="viewport" content="width=device-width"><h1>Back at the shop</h1>');
  });
  return { url: `http://127.0.0.1:${await listen(server, 0)}`, server };
}
