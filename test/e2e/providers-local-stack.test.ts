import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../lib/local/paths.ts";
import { type AdyenDouble, startAdyenDouble } from "../doubles/adyen.ts";
import { type StripeDouble, startStripeDouble } from "../doubles/stripe.ts";
import { payOnlyThrough } from "../support/gateways.ts";
import { type Receiver, startReceiver } from "../support/webhooks.ts";
import { api, type Client, type RunningStack, startStack } from "./harness.ts";

/**
 * Issue 19's walk on `npm start` (the real entry point, its own DynamoDB Local), with
 * `STRIPE_API_URL` and `ADYEN_CHECKOUT_API_URL` pointing at the project's doubles of Stripe and
 * Adyen: a merchant configures each gateway, disables the sandbox cards and pays through it, as
 * with curl. The stack delivers our own webhooks to a receiver on loopback.
 */
let stack: RunningStack;
let stripe: StripeDouble;
let adyen: AdyenDouble;
let receiver: Receiver;

const HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";

beforeAll(async () => {
  [stripe, adyen, receiver] = await Promise.all([
    startStripeDouble(),
    startAdyenDouble(),
    startReceiver("providers"),
  ]);
  stack = await startStack({
    dynamodb: "own",
    env: { STRIPE_API_URL: stripe.url, ADYEN_CHECKOUT_API_URL: adyen.url },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([stripe?.close(), adyen?.close(), receiver?.close()]);
});

const cardOf = async (client: Client, number: string, name?: string) =>
  (
    await client.post("/cards", {
      number,
      exp_month: 3,
      exp_year: 2030,
      cvc2: "737",
      ...(name ? { name } : {}),
    })
  ).body.card.id as string;

const invoiceOf = async (client: Client, amount = "10.00") =>
  (
    await client.post("/invoices", {
      name: "Order",
      amount,
      currency: "EUR",
      return_url: "https://shop.example/done",
    })
  ).body.invoice.id as string;

describe("real providers on the local stack (npm start)", () => {
  it("pay through Stripe: capture part, refund twice, void, a decline, 3-D Secure, and a renewal as a merchant-initiated payment", async () => {
    const sandbox = api(stack.url, stack.credentials.sandbox);
    const shopper = api(stack.url, { project_id: stack.credentials.sandbox.project_id, private_key: "" });
    const configurationId = await payOnlyThrough(sandbox, "stripe", {
      secret_key: "sk_test_51Walk",
      webhook_secret: "whsec_walk",
    });
    stripe.addWebhookEndpoint(`${stack.url}/gateway-webhooks/${configurationId}`, "whsec_walk");

    const paid = await invoiceOf(sandbox);
    const authorized = await sandbox.post(`/invoices/${paid}/authorize`, {
      source: await cardOf(sandbox, "4242424242424242"),
    });
    expect(authorized.body.transaction).toMatchObject({ status: "authorized", gateway_name: "stripe" });
    const transactionId = authorized.body.transaction.id;
    expect(
      (await sandbox.post(`/invoices/${paid}/capture`, { amount: "8.00" })).body.transaction.captured_amount,
    ).toBe("8.00");
    for (const amount of ["3.00", "2.00"]) {
      expect((await sandbox.post(`/transactions/${transactionId}/refunds`, { amount })).status).toBe(200);
    }
    expect((await sandbox.get(`/transactions/${transactionId}`)).body.transaction.refunded_amount).toBe(
      "5.00",
    );

    const voidable = await invoiceOf(sandbox);
    await sandbox.post(`/invoices/${voidable}/authorize`, {
      source: await cardOf(sandbox, "4242424242424242"),
    });
    expect((await sandbox.post(`/invoices/${voidable}/void`, {})).body.transaction.status).toBe("voided");

    const declined = await sandbox.post(`/invoices/${await invoiceOf(sandbox)}/authorize`, {
      source: await cardOf(sandbox, "4000000000009995"),
    });
    expect(declined.status).toBe(410);
    expect(declined.body.error_type).toBe("card.no-money");

    // The shopper's 3-D Secure round trip, from the browser (the public key).
    const challenged = await invoiceOf(sandbox);
    const threeDSCard = await cardOf(sandbox, "4000002500003155");
    const action = (await shopper.post(`/invoices/${challenged}/capture`, { source: threeDSCard })).body
      .customer_action;
    const atStripe = await fetch(`${action.value}?answer=approve`, { redirect: "manual" });
    expect((await fetch(atStripe.headers.get("location") ?? "", { redirect: "manual" })).status).toBe(303);
    expect((await shopper.post(`/invoices/${challenged}/capture`, { source: threeDSCard })).status).toBe(200);

    // The card of that customer-initiated payment is saved; its renewal goes as a merchant-initiated
    // payment naming the first payment's network transaction id.
    const customer = (await sandbox.post("/customers", { first_name: "Ada" })).body.customer.id;
    const token = (await sandbox.post(`/customers/${customer}/tokens`, { source: threeDSCard })).body.token
      .id;
    await sandbox.post("/plans", {
      id: "monthly",
      name: "Monthly",
      amount: "5.00",
      currency: "EUR",
      interval: "1m",
    });
    const subscription = await sandbox.post("/subscriptions", {
      customer_id: customer,
      plan_id: "monthly",
      source: token,
    });
    expect(subscription.status, JSON.stringify(subscription.body)).toBe(200);
    const now = Date.parse((await sandbox.get("/sandbox/clock")).body.clock.now);
    const advanced = await sandbox.post("/sandbox/clock", {
      advance_to: new Date(now + 32 * 24 * 3600 * 1000).toISOString(),
    });
    expect(advanced.status).toBe(200);
    // The first period charged when the subscription was made (the local scheduler ran it), the
    // second when the clock passed its date.
    const renewed = (await sandbox.get(`/subscriptions/${subscription.body.subscription.id}`)).body
      .subscription;
    expect(renewed.iterations, JSON.stringify(advanced.body.jobs)).toBe(2);
    const firstTransaction = (await sandbox.get(`/invoices/${challenged}/transactions`)).body.transaction.id;
    const firstIntent = stripe
      .intents()
      .find((intent) => intent.metadata.transaction_id === firstTransaction);
    // Merchant-initiated (off_session) like every payment from the merchant's server; the renewals
    // of the saved card name the network transaction id of its customer-initiated payment.
    const renewals = stripe.requests.filter(
      (request) =>
        request.path === "/v1/payment_intents" &&
        request.form.off_session === "true" &&
        JSON.stringify(request.form.payment_method_options ?? {}).includes("mit_exemption"),
    );
    expect(renewals).toHaveLength(2);
    for (const renewal of renewals) {
      expect(renewal.form.payment_method_options).toMatchObject({
        card: { mit_exemption: { network_transaction_id: firstIntent?.network_transaction_id } },
      });
    }
  });

  it("pay through Adyen: the capture settled by its signed notification, our invoice.completed after it; a forged one refused", async () => {
    // Another project of the running stack, as a merchant makes it: `npm run project -- create`.
    const { DYNAMODB_ENDPOINT: _shared, TABLE_NAME: _table, ...env } = process.env;
    const created = await promisify(execFile)(
      process.execPath,
      [
        join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs"),
        "bin/project.ts",
        "create",
        "--name",
        "Adyen merchant",
      ],
      { cwd: repoRoot, env: { ...env, DATA_DIR: stack.dataDir } },
    );
    const project = JSON.parse(created.stdout.slice(created.stdout.indexOf("{")));
    const sandbox = api(stack.url, project.sandbox);
    await sandbox.put(`/projects/${project.sandbox.project_id}`, { webhook_url: receiver.url });
    const configurationId = await payOnlyThrough(sandbox, "adyen", {
      api_key: "AQEyhmfxLI3MaBFLw0m/n3Q5qf3VaY9UCJ14XWZE03G",
      merchant_account: "AcmeECOM",
      hmac_key: HMAC_KEY,
    });
    const webhookUrl = `${stack.url}/gateway-webhooks/${configurationId}`;
    adyen.setWebhook(webhookUrl, HMAC_KEY);

    const invoiceId = await invoiceOf(sandbox);
    await sandbox.post(`/invoices/${invoiceId}/authorize`, {
      source: await cardOf(sandbox, "4111111111111111"),
    });
    const capture = await sandbox.post(`/invoices/${invoiceId}/capture`, {});
    expect(capture.body.transaction).toMatchObject({
      status: "authorized",
      awaiting_gateway: { operation: "capture" },
    });

    // A forged notification (not signed with the configuration's key) changes nothing.
    const [pending] = adyen.queued().filter((item) => item.eventCode === "CAPTURE");
    const forged = await fetch(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        live: "false",
        notificationItems: [
          {
            NotificationRequestItem: {
              ...pending,
              additionalData: { hmacSignature: createHmac("sha256", "forged").update("x").digest("base64") },
            },
          },
        ],
      }),
    });
    expect(forged.status).toBe(400);
    expect((await sandbox.get(`/invoices/${invoiceId}/transactions`)).body.transaction.status).toBe(
      "authorized",
    );

    const deliveredAt = performance.now();
    expect(await adyen.deliverNotifications()).toEqual([200, 200]);
    expect((await sandbox.get(`/invoices/${invoiceId}/transactions`)).body.transaction.status).toBe(
      "completed",
    );
    // Our invoice.completed webhook reaches the merchant after Adyen's notification settled it.
    const deadline = Date.now() + 15_000;
    let completedAt: number | undefined;
    while (completedAt === undefined && Date.now() < deadline) {
      for (const request of receiver.requests) {
        const event = (await sandbox.get(`/events/${JSON.parse(request.body).event_id}`)).body.event;
        if (event.name === "invoice.completed" && event.data.invoice?.id === invoiceId)
          completedAt = request.receivedAt;
      }
      if (completedAt === undefined) await new Promise((done) => setTimeout(done, 200));
    }
    expect(completedAt).toBeGreaterThan(deliveredAt);
  });
});
