import { createHmac } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { createProject } from "../../shared/projects/project.ts";
import { type AdyenDouble, CAPTURE_FAILS_HOLDER, startAdyenDouble, THREE_DS_CARD } from "../doubles/adyen.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { killedAtTransaction } from "../support/crash.ts";
import { eventNamesOfTransaction } from "../support/events.ts";
import { type ProviderEnvironment, providerEnvironment, providerInvoice } from "../support/gateways.ts";

/**
 * Issue 19: card payments through the `adyen` connector, against the project's stateful double of
 * Adyen's Checkout API (`test/doubles/adyen.ts`). Captures, voids, refunds and increments are only
 * `received` by Adyen: its signed webhook decides them. Each test has an environment of its own whose
 * only card configuration is Adyen's.
 */
const local = useInProcessApi("Adyen connector test");
let adyen: AdyenDouble;
const HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";

beforeAll(async () => {
  adyen = await startAdyenDouble();
  process.env.ADYEN_CHECKOUT_API_URL = adyen.url;
});

afterAll(async () => {
  await adyen?.close();
});

afterEach(async () => {
  // Nothing of a test is left for the next one's webhook.
  await adyen.deliverNotifications();
});

type Environment = ProviderEnvironment;

async function adyenEnvironment(): Promise<Environment> {
  const env = await providerEnvironment(local.url, "Adyen merchant", "adyen", {
    api_key: "AQEyhmfxLI3MaBFLw0m/n3Q5qf3VaY9UCJ14XWZE03G",
    merchant_account: "AcmeECOM",
    hmac_key: HMAC_KEY,
  });
  adyen.setWebhook(`${local.url}/gateway-webhooks/${env.configurationId}`, HMAC_KEY);
  return env;
}

async function card(env: Environment, options: { number?: string; name?: string } = {}): Promise<string> {
  const { body } = await env.client.post("/cards", {
    number: options.number ?? "4111111111111111",
    exp_month: 3,
    exp_year: 2030,
    cvc2: "737",
    ...(options.name ? { name: options.name } : {}),
  });
  return body.card.id;
}

const invoice = providerInvoice;

const transactionOf = async (env: Environment, invoiceId: string) =>
  (await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;

describe("an Adyen gateway configuration", () => {
  it("takes Adyen's test endpoint in a sandbox and a live endpoint prefix in live, naming the wrong setting", async () => {
    const project = await createProject("Adyen settings");
    const sandbox = api(local.url, project.sandbox);
    const live = api(local.url, project.live);
    const settings = { api_key: "AQEyhmfxLI3MaBFLw0m/n3Q5qf3VaY9UCJ14XWZE03G", merchant_account: "AcmeECOM" };

    const prefixInSandbox = await sandbox.post("/gateways/adyen/gateway-configurations", {
      settings: { ...settings, live_url_prefix: "1797a841fbb37ca7-AcmeCorp" },
    });
    expect(prefixInSandbox.status).toBe(400);
    expect(prefixInSandbox.body.invalid_fields).toEqual([
      { name: "settings.live_url_prefix", message: expect.stringContaining("live") },
    ]);
    const liveWithoutPrefix = await live.post("/gateways/adyen/gateway-configurations", { settings });
    expect(liveWithoutPrefix.body.invalid_fields).toEqual([
      { name: "settings.live_url_prefix", message: "is required" },
    ]);
    const hostInPrefix = await live.post("/gateways/adyen/gateway-configurations", {
      settings: { ...settings, live_url_prefix: "evil.example/x" },
    });
    expect(hostInPrefix.body.invalid_fields).toEqual([
      { name: "settings.live_url_prefix", message: expect.any(String) },
    ]);
    const badHmac = await sandbox.post("/gateways/adyen/gateway-configurations", {
      settings: { ...settings, hmac_key: "xyz" },
    });
    expect(badHmac.body.invalid_fields).toEqual([{ name: "settings.hmac_key", message: expect.any(String) }]);

    const made = await live.post("/gateways/adyen/gateway-configurations", {
      settings: { ...settings, live_url_prefix: "1797a841fbb37ca7-AcmeCorp", hmac_key: HMAC_KEY },
    });
    expect(made.status).toBe(200);
    expect(made.body.gateway_configuration.settings).toEqual({
      merchant_account: "AcmeECOM",
      live_url_prefix: "1797a841fbb37ca7-AcmeCorp",
    });
  });
});

describe("card payments through Adyen", () => {
  it("authorizes; the capture is received, then settled by Adyen's signed webhook with our events", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    const authorized = await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) });
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
    expect(authorized.body.transaction).toMatchObject({ status: "authorized", gateway_name: "adyen" });
    const sent = adyen.requests.filter((request) => request.path === "/payments").at(-1);
    expect(sent?.body).toMatchObject({
      additionalData: { manualCapture: "true" },
      amount: { value: 1000, currency: "EUR" },
    });

    const capture = await env.client.post(`/invoices/${invoiceId}/capture`, { amount: "7.50" });
    expect(capture.status, JSON.stringify(capture.body)).toBe(200);
    expect(capture.body.transaction).toMatchObject({
      status: "authorized",
      captured_amount: "0.00",
      awaiting_gateway: { operation: "capture", amount: "7.50" },
    });
    const transactionId = capture.body.transaction.id;
    expect(await eventNamesOfTransaction(env.scope, transactionId)).not.toContain("transaction.captured");
    // Another operation meanwhile waits for Adyen's decision.
    const refundMeanwhile = await env.client.post(`/transactions/${transactionId}/refunds`, {
      amount: "1.00",
    });
    expect(refundMeanwhile.body.error_type).toBe("request.transaction.awaiting-gateway");

    expect(await adyen.deliverNotifications()).toEqual([200, 200]);
    const settled = await transactionOf(env, invoiceId);
    expect(settled).toMatchObject({ status: "completed", captured_amount: "7.50", awaiting_gateway: null });
    expect(await eventNamesOfTransaction(env.scope, transactionId)).toEqual(
      expect.arrayContaining(["transaction.authorized", "transaction.captured", "invoice.completed"]),
    );

    // Two partial refunds, each received, then decided by a webhook.
    for (const amount of ["2.00", "1.50"]) {
      expect((await env.client.post(`/transactions/${transactionId}/refunds`, { amount })).status).toBe(200);
      expect(await adyen.deliverNotifications()).toEqual([200]);
    }
    expect(await transactionOf(env, invoiceId)).toMatchObject({ refunded_amount: "3.50" });
    // A repeated notification changes nothing.
    const refunds = adyen.requests.filter((request) => request.path.endsWith("/refunds"));
    expect(refunds.map((request) => request.idempotencyKey)).toEqual(
      refunds.map((request) => request.body.reference),
    );
  });

  it("voids through a received cancel, and fails a capture Adyen reports failed", async () => {
    const env = await adyenEnvironment();
    const voidInvoice = await invoice(env);
    await env.client.post(`/invoices/${voidInvoice}/authorize`, { source: await card(env) });
    await env.client.post(`/invoices/${voidInvoice}/void`, {});
    await adyen.deliverNotifications();
    expect((await transactionOf(env, voidInvoice)).status).toBe("voided");

    const failing = await invoice(env);
    await env.client.post(`/invoices/${failing}/authorize`, {
      source: await card(env, { name: CAPTURE_FAILS_HOLDER }),
    });
    await env.client.post(`/invoices/${failing}/capture`, {});
    await adyen.deliverNotifications();
    const failed = await transactionOf(env, failing);
    expect(failed).toMatchObject({ status: "failed", captured_amount: "0.00" });
    expect(await eventNamesOfTransaction(env.scope, failed.id)).toContain("transaction.failed");
  });

  it("answers Adyen's refusals with the catalogue's codes, from the scheme's raw response", async () => {
    const env = await adyenEnvironment();
    for (const [name, errorType] of [
      ["NOT_ENOUGH_BALANCE", "card.no-money"],
      ["BLOCK_CARD", "card.blacklisted"],
      ["FRAUD", "card.possible-fraud"],
      ["DECLINED", "card.do-not-honor"],
    ] as const) {
      const invoiceId = await invoice(env);
      const answer = await env.client.post(`/invoices/${invoiceId}/authorize`, {
        source: await card(env, { name }),
      });
      expect(answer.status, name).toBe(410);
      expect(answer.body.error_type, name).toBe(errorType);
    }
  });

  it("increments a pre-authorisation; where the card cannot be, a clear 400", async () => {
    const env = await adyenEnvironment();
    const incremental = await invoice(env, { incremental: true });
    await env.client.post(`/invoices/${incremental}/authorize`, {
      source: await card(env),
      incremental: true,
    });
    expect(
      (await env.client.post(`/invoices/${incremental}/increment_authorization`, { amount: "5.00" })).status,
    ).toBe(200);
    await adyen.deliverNotifications();
    expect((await transactionOf(env, incremental)).authorized_amount).toBe("15.00");
    const update = adyen.requests.find((request) => request.path.endsWith("/amountUpdates"));
    expect(update?.body.amount).toEqual({ value: 1500, currency: "EUR" });

    const ordinary = await invoice(env, { incremental: true });
    await env.client.post(`/invoices/${ordinary}/authorize`, {
      source: await card(env, { number: "5555555555554444" }),
      incremental: true,
    });
    const refused = await env.client.post(`/invoices/${ordinary}/increment_authorization`, {
      amount: "5.00",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("payment.increment-not-supported");
  });

  it("runs 3-D Secure through Adyen's redirect and /payments/details, in the whole page", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env, { number: THREE_DS_CARD });
    const first = await env.browser.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(first.body.customer_action).toMatchObject({ type: "url", metadata: { no_iframe: "true" } });

    const atAdyen = await fetch(`${first.body.customer_action.value}?answer=approve`, { redirect: "manual" });
    const back = await fetch(atAdyen.headers.get("location") ?? "", { redirect: "manual" });
    expect(back.status).toBe(303);
    expect((await env.browser.post(`/invoices/${invoiceId}/authorize`, { source })).status).toBe(200);
    expect(await transactionOf(env, invoiceId)).toMatchObject({
      status: "authorized",
      three_d_s_status: "challenge-passed",
    });
    expect(adyen.requests.some((request) => request.path === "/payments/details")).toBe(true);
  });
});

describe("money rules through Adyen", () => {
  it("keeps an authorization Adyen made but never answered; its AUTHORISATION notification settles it", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env);
    process.env.PROVIDER_TIMEOUT_MS = "300";
    adyen.injectFault("/payments", "hang-after-processing");
    const timedOut = await env.client.post(`/invoices/${invoiceId}/authorize`, { source });
    delete process.env.PROVIDER_TIMEOUT_MS;
    expect(timedOut.status, JSON.stringify(timedOut.body)).toBe(504);

    // Adyen's notification comes while the request that timed out still holds the operation: 503,
    // and Adyen sends it again later; then it settles the authorization from what Adyen said.
    expect(await adyen.deliverNotifications()).toEqual([503]);
    expect((await transactionOf(env, invoiceId)).status).toBe("waiting");
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 2 * 60_000));
    expect(await adyen.deliverNotifications()).toEqual([200]);
    vi.restoreAllMocks();
    const transaction = await transactionOf(env, invoiceId);
    expect(transaction.status).toBe("authorized");
    expect(
      adyen.payments().filter((payment) => payment.metadata.transaction_id === transaction.id),
    ).toHaveLength(1);
    expect(await eventNamesOfTransaction(env.scope, transaction.id)).toEqual(["transaction.authorized"]);
  });

  it("settles an authorization cut off by a crash after Adyen answered, from Adyen's notification", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env);
    const restore = killedAtTransaction(2);
    expect((await env.client.post(`/invoices/${invoiceId}/authorize`, { source })).status).toBe(500);
    restore();

    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 2 * 60_000));
    expect(await adyen.deliverNotifications()).toEqual([200]);
    vi.restoreAllMocks();
    expect((await transactionOf(env, invoiceId)).status).toBe("authorized");
  });

  it("settles a payment whose /payments/details went unanswered after 3-D Secure, from its notification", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env, { number: THREE_DS_CARD });
    const first = await env.browser.post(`/invoices/${invoiceId}/authorize`, { source });
    const atAdyen = await fetch(`${first.body.customer_action.value}?answer=approve`, { redirect: "manual" });
    await fetch(atAdyen.headers.get("location") ?? "", { redirect: "manual" });
    process.env.PROVIDER_TIMEOUT_MS = "300";
    adyen.injectFault("/payments/details", "hang-after-processing");
    const timedOut = await env.browser.post(`/invoices/${invoiceId}/authorize`, { source });
    delete process.env.PROVIDER_TIMEOUT_MS;
    expect(timedOut.status).toBe(504);

    // Adyen's AUTHORISATION names the first attempt's reference: it settles the later one.
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 2 * 60_000));
    expect(await adyen.deliverNotifications()).toEqual([200]);
    vi.restoreAllMocks();
    expect((await transactionOf(env, invoiceId)).status).toBe("authorized");
  });

  it("sends one capture to Adyen when five captures race", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) });
    const before = adyen.requests.filter((request) => request.path.endsWith("/captures")).length;

    const answers = await Promise.all(
      Array.from({ length: 5 }, () => env.client.post(`/invoices/${invoiceId}/capture`, {})),
    );

    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(adyen.requests.filter((request) => request.path.endsWith("/captures")).length - before).toBe(1);
    await adyen.deliverNotifications();
    expect((await transactionOf(env, invoiceId)).captured_amount).toBe("10.00");
  });
});

describe("customer tokens verified through Adyen", () => {
  it("verifies a card with a zero-value authorization, and refuses one the issuer declines", async () => {
    const env = await adyenEnvironment();
    const customer = (await env.client.post("/customers", { first_name: "Ada" })).body.customer.id;
    const verified = await env.client.post(`/customers/${customer}/tokens`, {
      source: await card(env),
      verify: true,
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.token).toMatchObject({ verification_status: "success", is_chargeable: true });
    expect(adyen.requests.filter((request) => request.path === "/payments").at(-1)?.body.amount).toEqual({
      value: 0,
      currency: "EUR",
    });

    const declined = await env.client.post(`/customers/${customer}/tokens`, {
      source: await card(env, { name: "CARD_EXPIRED" }),
      verify: true,
    });
    expect(declined.status).toBe(410);
    expect(declined.body.error_type).toBe("card.expired");
  });
});

describe("Adyen's webhooks", () => {
  it("refuse a notification not signed with the configuration's key, or from the live platform, changing nothing", async () => {
    const env = await adyenEnvironment();
    const invoiceId = await invoice(env);
    await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) });
    await env.client.post(`/invoices/${invoiceId}/capture`, {});
    const [queued] = adyen.queued().filter((item) => item.eventCode === "CAPTURE");
    expect(queued).toBeDefined();
    const item = queued as NonNullable<typeof queued>;
    const signed = (key: string) => {
      const text = [
        item.pspReference,
        item.originalReference ?? "",
        item.merchantAccountCode,
        item.merchantReference,
        item.amount.value,
        item.amount.currency,
        item.eventCode,
        item.success,
      ].join(":");
      return createHmac("sha256", Buffer.from(key, "hex")).update(text).digest("base64");
    };
    const send = (signature: string, live = "false") =>
      fetch(`${local.url}/gateway-webhooks/${env.configurationId}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          live,
          notificationItems: [
            { NotificationRequestItem: { ...item, additionalData: { hmacSignature: signature } } },
          ],
        }),
      });

    const forged = await send(signed("00".repeat(32)));
    expect(forged.status).toBe(400);
    expect((await send(signed(HMAC_KEY), "true")).status).toBe(400);
    expect((await transactionOf(env, invoiceId)).status).toBe("authorized");
    // Malformed batches are refused, never a 500.
    for (const body of ["null", '{"notificationItems":"x"}', '{"notificationItems":[null]}', "{"]) {
      const malformed = await fetch(`${local.url}/gateway-webhooks/${env.configurationId}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(malformed.status, body).toBe(400);
    }
    const numericSignature = await fetch(`${local.url}/gateway-webhooks/${env.configurationId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        live: "false",
        notificationItems: [{ NotificationRequestItem: { ...item, additionalData: { hmacSignature: 42 } } }],
      }),
    });
    expect(numericSignature.status).toBe(400);

    expect((await send(signed(HMAC_KEY))).status).toBe(200);
    expect((await transactionOf(env, invoiceId)).status).toBe("completed");
    // The same notification again: accepted, and nothing moves twice.
    expect((await send(signed(HMAC_KEY))).status).toBe(200);
    const transaction = await transactionOf(env, invoiceId);
    expect(transaction.captured_amount).toBe("10.00");
    expect(
      (await eventNamesOfTransaction(env.scope, transaction.id)).filter(
        (name) => name === "transaction.captured",
      ),
    ).toHaveLength(1);
  });
});
