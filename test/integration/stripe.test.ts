import { createHmac } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { createProject } from "../../shared/projects/project.ts";
import { type StripeDouble, startStripeDouble } from "../doubles/stripe.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { killedAtTransaction } from "../support/crash.ts";
import { eventNamesOfTransaction } from "../support/events.ts";
import { type ProviderEnvironment, providerEnvironment, providerInvoice } from "../support/gateways.ts";

/**
 * Issue 19: card payments through the `stripe` connector, against the project's stateful double of
 * Stripe (`test/doubles/stripe.ts`, Stripe's documented behaviour and test cards). Each test has an
 * environment of its own whose only card configuration is Stripe's.
 */
const local = useInProcessApi("Stripe connector test");
let stripe: StripeDouble;

beforeAll(async () => {
  stripe = await startStripeDouble();
  process.env.STRIPE_API_URL = stripe.url;
});

afterAll(async () => {
  await stripe?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
  process.env.STRIPE_API_URL = stripe.url;
  delete process.env.PROVIDER_TIMEOUT_MS;
});

/**
 * The recovery job run once the reservation's lease is over and Stripe's search can be believed
 * (`SEARCH_LAG_MS`): six minutes on.
 */
async function recoverLater(scope: string) {
  vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 6 * 60_000));
  const report = await recoverReservations({ onlyScope: scope });
  vi.restoreAllMocks();
  return report;
}

type Environment = ProviderEnvironment;

async function stripeEnvironment(): Promise<Environment> {
  const env = await providerEnvironment(local.url, "Stripe merchant", "stripe", {
    secret_key: "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    webhook_secret: "whsec_test",
  });
  return env;
}

async function card(env: Environment, number = "4242424242424242"): Promise<string> {
  const { body } = await env.client.post("/cards", { number, exp_month: 12, exp_year: 2099, cvc2: "123" });
  return body.card.id;
}

const invoice = providerInvoice;

describe("a Stripe gateway configuration", () => {
  it("takes a test key in a sandbox, a live key in live, and never returns either", async () => {
    const project = await createProject("Stripe keys");
    const sandbox = api(local.url, project.sandbox);
    const live = api(local.url, project.live);

    const wrongKind = await sandbox.post("/gateways/stripe/gateway-configurations", {
      settings: { secret_key: "sk_live_51Habcdef" },
    });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.invalid_fields).toEqual([
      { name: "settings.secret_key", message: expect.stringContaining("test key") },
    ]);
    const testInLive = await live.post("/gateways/stripe/gateway-configurations", {
      settings: { secret_key: "sk_test_51Habcdef" },
    });
    expect(testInLive.status).toBe(400);
    expect(testInLive.body.invalid_fields[0].name).toBe("settings.secret_key");
    const badSecret = await sandbox.post("/gateways/stripe/gateway-configurations", {
      settings: { secret_key: "sk_test_51Habcdef", webhook_secret: "not-a-secret" },
    });
    expect(badSecret.body.invalid_fields).toEqual([
      { name: "settings.webhook_secret", message: expect.any(String) },
    ]);
    const missing = await sandbox.post("/gateways/stripe/gateway-configurations", {});
    expect(missing.body.invalid_fields).toEqual([{ name: "settings.secret_key", message: "is required" }]);

    const made = await sandbox.post("/gateways/stripe/gateway-configurations", {
      settings: { secret_key: "sk_test_51Habcdef", webhook_secret: "whsec_abc" },
    });
    expect(made.status).toBe(200);
    expect(made.body.gateway_configuration).toMatchObject({ gateway_name: "stripe", settings: {} });
    const read = await sandbox.get(`/gateway-configurations/${made.body.gateway_configuration.id}`);
    expect(JSON.stringify(read.body)).not.toContain("sk_test_51Habcdef");
    expect(JSON.stringify(read.body)).not.toContain("whsec_abc");
    const liveMade = await live.post("/gateways/stripe/gateway-configurations", {
      settings: { secret_key: "sk_live_51Habcdef" },
    });
    expect(liveMade.status).toBe(200);
  });
});

describe("card payments through Stripe", () => {
  it("authorizes, captures part, refunds twice, each with Stripe's idempotency key from our reference", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);

    const authorized = await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) });
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
    expect(authorized.body.transaction).toMatchObject({
      status: "authorized",
      gateway_name: "stripe",
      gateway_configuration_id: env.configurationId,
    });
    const intent = stripe.intents().find((item) => item.metadata.scope === env.scope);
    expect(intent).toMatchObject({ status: "requires_capture", amount: 1000, currency: "eur" });

    const captured = await env.client.post(`/invoices/${invoiceId}/capture`, { amount: "6.00" });
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.transaction).toMatchObject({ status: "completed", captured_amount: "6.00" });
    expect(stripe.intent(intent?.id ?? "")).toMatchObject({ status: "succeeded", amount_received: 600 });

    const transactionId = authorized.body.transaction.id;
    for (const amount of ["2.00", "1.50"]) {
      const refunded = await env.client.post(`/transactions/${transactionId}/refunds`, { amount });
      expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    }
    const after = (await env.client.get(`/transactions/${transactionId}`)).body.transaction;
    expect(after).toMatchObject({ refunded_amount: "3.50", captured_amount: "6.00" });
    expect(
      stripe
        .refunds()
        .filter((refund) => refund.payment_intent === intent?.id)
        .map((refund) => refund.amount),
    ).toEqual([200, 150]);
    // Every write to Stripe carried an idempotency key, each the reference of one of our operations.
    const writes = stripe.requests.filter(
      (request) => request.method === "POST" && request.form.metadata !== undefined,
    );
    expect(writes.every((request) => /^op_/.test(request.idempotencyKey ?? ""))).toBe(true);
    expect(await eventNamesOfTransaction(env.scope, transactionId)).toEqual(
      expect.arrayContaining(["transaction.authorized", "transaction.captured", "transaction.refunded"]),
    );
  });

  it("voids an authorization (Stripe cancels the PaymentIntent)", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) });
    const voided = await env.client.post(`/invoices/${invoiceId}/void`, {});
    expect(voided.status, JSON.stringify(voided.body)).toBe(200);
    expect(voided.body.transaction.status).toBe("voided");
    expect(stripe.intents().find((item) => item.metadata.scope === env.scope)?.status).toBe("canceled");
  });

  it("answers a decline with the one catalogue's code, soft or hard as it says", async () => {
    const env = await stripeEnvironment();
    for (const [number, errorType] of [
      ["4000000000009995", "card.no-money"],
      ["4000000000009979", "card.stolen"],
      ["4000000000000002", "card.declined"],
      ["4000000000000069", "card.expired"],
    ] as const) {
      const invoiceId = await invoice(env);
      const answer = await env.client.post(`/invoices/${invoiceId}/authorize`, {
        source: await card(env, number),
      });
      expect(answer.status, number).toBe(410);
      expect(answer.body.error_type, number).toBe(errorType);
      const transaction = (await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
      expect(transaction).toMatchObject({ status: "failed", error_code: errorType });
    }
    const codes = (await env.client.get("/error-codes")).body;
    expect(codes.codes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: "card.no-money", retry: "soft" }),
        expect.objectContaining({ code: "card.stolen", retry: "hard" }),
      ]),
    );
  });

  it("increments an incremental authorization, and answers a clear 400 where the card cannot be", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env, { incremental: true });
    await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env), incremental: true });
    const incremented = await env.client.post(`/invoices/${invoiceId}/increment_authorization`, {
      amount: "5.00",
    });
    expect(incremented.status, JSON.stringify(incremented.body)).toBe(200);
    expect(stripe.intents().find((item) => item.metadata.scope === env.scope)).toMatchObject({
      amount: 1500,
    });

    const refusedInvoice = await invoice(env, { incremental: true });
    await env.client.post(`/invoices/${refusedInvoice}/authorize`, {
      source: await card(env, "4000000000000010"),
      incremental: true,
    });
    const refused = await env.client.post(`/invoices/${refusedInvoice}/increment_authorization`, {
      amount: "5.00",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("payment.increment-not-supported");
  });

  it("runs 3-D Secure through Stripe's page and our return address, for the shopper's browser", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env, "4000000000003220");

    const first = await env.browser.post(`/invoices/${invoiceId}/capture`, { source });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.customer_action).toMatchObject({ type: "url" });
    const challenge = String(first.body.customer_action.value);
    expect(challenge.startsWith(stripe.url)).toBe(true);

    // The cardholder authenticates at Stripe, which sends the browser back to our return address.
    const atStripe = await fetch(`${challenge}?answer=approve`, { redirect: "manual" });
    expect(atStripe.status).toBe(302);
    const back = await fetch(atStripe.headers.get("location") ?? "", { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe("https://shop.example/done");

    const completed = await env.browser.post(`/invoices/${invoiceId}/capture`, { source });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body).toEqual({ success: true });
    const transaction = (await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(transaction).toMatchObject({ status: "completed", three_d_s_status: "challenge-passed" });
    // The return address is answered once.
    expect((await fetch(atStripe.headers.get("location") ?? "", { redirect: "manual" })).status).toBe(404);
  });

  it("refuses a merchant-initiated payment the issuer wants authenticated, as needing authentication", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    const answer = await env.client.post(`/invoices/${invoiceId}/authorize`, {
      source: await card(env, "4000000000003220"),
    });
    expect(answer.status).toBe(410);
    expect(answer.body.error_type).toBe("card.needs-authentication");
  });
});

describe("customer tokens verified through Stripe", () => {
  it("verifies a card with a SetupIntent, and refuses one the issuer declines", async () => {
    const env = await stripeEnvironment();
    const customer = (await env.client.post("/customers", { first_name: "Ada" })).body.customer.id;
    const verified = await env.client.post(`/customers/${customer}/tokens`, {
      source: await card(env),
      verify: true,
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.token).toMatchObject({ verification_status: "success", is_chargeable: true });
    expect(
      stripe.requests.some(
        (request) => request.path === "/v1/setup_intents" && request.form.confirm === "true",
      ),
    ).toBe(true);

    const declined = await env.client.post(`/customers/${customer}/tokens`, {
      source: await card(env, "4000000000009995"),
      verify: true,
    });
    expect(declined.status).toBe(410);
    expect(declined.body.error_type).toBe("card.no-money");

    // Stripe out of reach: a clear 502, nothing stored, never a 500.
    process.env.STRIPE_API_URL = "http://127.0.0.1:59999";
    const unreachable = await env.client.post(`/customers/${customer}/tokens`, {
      source: await card(env),
      verify: true,
    });
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error_type).toBe("gateway.unavailable");
    expect((await env.client.get(`/customers/${customer}/tokens`)).body.tokens).toHaveLength(1);
  });
});

describe("money rules through Stripe", () => {
  it("keeps an authorization Stripe made but never answered, and the recovery job settles it", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env);
    process.env.PROVIDER_TIMEOUT_MS = "300";
    stripe.injectFault("/v1/payment_intents", "hang-after-processing");

    const timedOut = await env.client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(timedOut.status, JSON.stringify(timedOut.body)).toBe(504);
    expect(timedOut.body.error_type).toBe("gateway.timeout");
    expect((await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction.status).toBe(
      "waiting",
    );

    expect(await recoverLater(env.scope)).toMatchObject({ found: 1, settled: 1 });
    const transaction = (await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(transaction.status).toBe("authorized");
    expect(stripe.intents().filter((intent) => intent.metadata.scope === env.scope)).toHaveLength(1);
    expect(await eventNamesOfTransaction(env.scope, transaction.id)).toEqual(["transaction.authorized"]);
  });

  it("settles, on PUT /invoices/{id}/sync-with-psp, an authorization whose answer was lost", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    process.env.PROVIDER_TIMEOUT_MS = "300";
    stripe.injectFault("/v1/payment_intents", "hang-after-processing");
    expect(
      (await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) })).status,
    ).toBe(504);
    // While the request that timed out could still settle it, the sync waits (a 409).
    expect((await env.client.put(`/invoices/${invoiceId}/sync-with-psp`, {})).status).toBe(409);

    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 6 * 60_000));
    const synced = await env.client.put(
      `/invoices/${invoiceId}/sync-with-psp`,
      {},
      { idempotencyKey: `sync-${invoiceId}` },
    );
    vi.restoreAllMocks();
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    expect(synced.body.invoice.id).toBe(invoiceId);
    expect((await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction.status).toBe(
      "authorized",
    );
    // Again: nothing left to settle, the invoice as it is.
    expect((await env.client.put(`/invoices/${invoiceId}/sync-with-psp`)).status).toBe(200);
  });

  it("answers 502 gateway.unavailable when Stripe cannot be reached, changes nothing, and the retry pays", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env);
    process.env.STRIPE_API_URL = "http://127.0.0.1:59999"; // nothing listens there

    const unreachable = await env.client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error_type).toBe("gateway.unavailable");
    process.env.STRIPE_API_URL = stripe.url;

    const retried = await env.client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.transaction.status).toBe("authorized");
    expect(stripe.intents().filter((intent) => intent.metadata.scope === env.scope)).toHaveLength(1);
  });

  it("settles a 500 Stripe answered without processing as not done, once its search can tell", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env);
    stripe.injectFault("/v1/payment_intents", "error-500");

    // Stripe's search cannot be believed yet: the operation stays reserved.
    expect((await env.client.post(`/invoices/${invoiceId}/authorize`, { source })).status).toBe(504);
    expect(await recoverLater(env.scope)).toMatchObject({ found: 1, notDone: 1 });
    const retried = await env.client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(stripe.intents().filter((intent) => intent.metadata.scope === env.scope)).toHaveLength(1);
  });

  it("settles an authorization cut off by a crash after Stripe answered, from Stripe's record", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    const source = await card(env);
    const restore = killedAtTransaction(2);
    expect((await env.client.post(`/invoices/${invoiceId}/authorize`, { source })).status).toBe(500);
    restore();

    expect(await recoverLater(env.scope)).toMatchObject({ found: 1, settled: 1 });
    expect((await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction.status).toBe(
      "authorized",
    );
  });

  it("captures once at Stripe when five captures race", async () => {
    const env = await stripeEnvironment();
    const invoiceId = await invoice(env);
    await env.client.post(`/invoices/${invoiceId}/authorize`, { source: await card(env) });
    const intent = stripe.intents().find((item) => item.metadata.scope === env.scope);

    const answers = await Promise.all(
      Array.from({ length: 5 }, () => env.client.post(`/invoices/${invoiceId}/capture`, {})),
    );

    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of answers.filter((item) => item.status !== 200)) expect(answer.status).toBe(409);
    const captures = stripe.requests.filter(
      (request) => request.path === `/v1/payment_intents/${intent?.id}/capture`,
    );
    expect(captures).toHaveLength(1);
    expect(stripe.intent(intent?.id ?? "")?.amount_received).toBe(1000);
  });
});

describe("Stripe's webhooks", () => {
  const webhookUrl = (env: Environment) => `${local.url}/gateway-webhooks/${env.configurationId}`;

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    for (let tries = 0; tries < 100; tries++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("timed out waiting");
  }

  it("record a refund Stripe accepted and then failed: no longer refunded, with its event", async () => {
    const env = await stripeEnvironment();
    stripe.addWebhookEndpoint(webhookUrl(env), "whsec_test");
    const invoiceId = await invoice(env);
    const paid = await env.client.post(`/invoices/${invoiceId}/capture`, {
      source: await card(env, "4000000000005126"),
    });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    const transactionId = paid.body.transaction.id;
    const refunded = await env.client.post(`/transactions/${transactionId}/refunds`, { amount: "4.00" });
    expect(refunded.status).toBe(200);

    const failed = await until(
      async () => (await env.client.get(`/transactions/${transactionId}`)).body.transaction,
      (transaction) => transaction.refunded_amount === "0.00",
    );
    expect(failed.refunds).toEqual([expect.objectContaining({ amount: "4.00", has_failed: true })]);
    expect(failed.status).toBe("completed");
    expect(await eventNamesOfTransaction(env.scope, transactionId)).toContain("transaction.refund_failed");
    // The money can be refunded again.
    expect(
      (await env.client.post(`/transactions/${transactionId}/refunds`, { amount: "10.00" })).status,
    ).toBe(200);
  });

  it("settle an authorization Stripe made but never answered, as soon as its event arrives", async () => {
    const env = await stripeEnvironment();
    stripe.addWebhookEndpoint(webhookUrl(env), "whsec_test");
    const invoiceId = await invoice(env);
    const source = await card(env);
    process.env.PROVIDER_TIMEOUT_MS = "300";
    stripe.injectFault("/v1/payment_intents", "hang-after-processing");
    expect((await env.client.post(`/invoices/${invoiceId}/authorize`, { source })).status).toBe(504);
    // Stripe's event came while the request still held the operation: the webhook was answered 503,
    // and Stripe sends it again (here: the same event, sent again once the lease is over).
    const intent = stripe.intents().find((item) => item.metadata.scope === env.scope);
    expect(
      stripe.deliveries
        .filter((delivery) => delivery.url === webhookUrl(env) && delivery.type.startsWith("payment_intent."))
        .map((delivery) => delivery.status),
    ).toEqual([503]);
    const later = Date.now() + 6 * 60_000;
    vi.spyOn(clock, "now").mockReturnValue(new Date(later));
    await stripe.emit(
      "payment_intent.amount_capturable_updated",
      { id: intent?.id, object: "payment_intent", metadata: intent?.metadata },
      Math.floor(later / 1000),
    );
    vi.restoreAllMocks();
    const transaction = (await env.client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(transaction.status).toBe("authorized");
  });

  it("refuse a forged, stale or misdirected webhook, changing nothing", async () => {
    const env = await stripeEnvironment();
    const body = JSON.stringify({
      id: "evt_1",
      type: "payment_intent.succeeded",
      livemode: false,
      data: { object: { id: "pi_x", metadata: {} } },
    });
    const t = Math.floor(Date.now() / 1000);
    const sign = (secret: string, at: number) =>
      createHmac("sha256", secret).update(`${at}.${body}`).digest("hex");
    const send = (signature: string | undefined, url = webhookUrl(env)) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(signature ? { "stripe-signature": signature } : {}),
        },
        body,
      });

    for (const signature of [
      undefined,
      `t=${t},v1=${sign("whsec_other", t)}`,
      `t=${t - 400},v1=${sign("whsec_test", t - 400)}`,
      "garbage",
    ]) {
      const answer = await send(signature);
      expect(answer.status, signature).toBe(400);
      expect(((await answer.json()) as { error_type: string }).error_type).toBe("request.webhook.unverified");
    }
    expect((await send(`t=${t},v1=${sign("whsec_test", t)}`)).status).toBe(200);
    expect(
      (
        await send(
          `t=${t},v1=${sign("whsec_test", t)}`,
          `${local.url}/gateway-webhooks/gway_conf_01JZZZZZZZZZZZZZZZZZZZZZZZ`,
        )
      ).status,
    ).toBe(404);
  });
});
