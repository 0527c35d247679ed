import { createHmac } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { describe, expect, it, vi } from "vitest";
import { contractOf, openApiDocument } from "../../lib/contract/document.ts";
import { routeKey, routes } from "../../lib/topology.ts";
import { clock as serviceClock } from "../../shared/clock.ts";
import { config } from "../../shared/config.ts";
import { firstOwner } from "../../shared/dashboard/links.ts";
import { runExport } from "../../shared/exports/run.ts";
import { resetExportStorage } from "../../shared/exports/storage/index.ts";
import { newId } from "../../shared/ids.ts";
import { runDailyClose } from "../../shared/payouts/close.ts";
import { createProject } from "../../shared/projects/project.ts";
import { startStripeDouble } from "../doubles/stripe.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { appleCertificateFor } from "../support/applepay.ts";
import { PASSWORD, tokenOf, totpCode } from "../support/dashboard.ts";
import { payOnlyThrough } from "../support/gateways.ts";
import { SoftwareAuthenticator } from "../support/passkey.ts";
import { aWellFormed } from "../support/paths.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 13: the OpenAPI document against live answers. A walk through every route of the topology
 * on the in-process API records each answer; each is then validated against the document (the
 * route's answer schema for its success status, the error shape for an error), and every route must
 * have answered at least one success. A presenter that shows something its schema does not say, or
 * a route the walk cannot reach, fails here.
 */
const local = useInProcessApi("Contract test");

type Json = Record<string, unknown>;
interface Recorded {
  route: string;
  status: number;
  contentType: string;
  // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field by the walk
  body: any;
  text: string;
}
const recorded: Recorded[] = [];

/** Sends a request for `route` (its key in the topology) and records the answer. */
async function call(
  route: string,
  target: string,
  options: {
    body?: Json | string;
    form?: boolean;
    credentials?: "private" | "public" | "none";
    headers?: Record<string, string>;
  } = {},
) {
  const [method = "GET"] = route.split(" ");
  const { project_id: id, private_key: key } = local.project.sandbox;
  const who = options.credentials ?? "private";
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (who !== "none") headers.authorization = basicAuthorization(id, who === "private" ? key : "");
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] = options.form ? "application/x-www-form-urlencoded" : "application/json";
    body = typeof options.body === "string" ? options.body : options.form ? "" : JSON.stringify(options.body);
  }
  const answer = await sendRaw(local.url, { method, target, headers, ...(body ? { body } : {}) });
  const contentType = String(answer.headers["content-type"] ?? "");
  let parsed: unknown = answer.text;
  if (contentType.startsWith("application/json")) parsed = JSON.parse(answer.text);
  const result: Recorded = { route, status: answer.status, contentType, body: parsed, text: answer.text };
  recorded.push(result);
  const cookies = [answer.headers["set-cookie"] ?? []].flat();
  return Object.assign(result, { cookies });
}

async function ok(route: string, target: string, options: Parameters<typeof call>[2] = {}) {
  const answer = await call(route, target, options);
  expect(answer.status, `${route}: ${answer.text.slice(0, 500)}`).toBeLessThan(400);
  return answer.body;
}

const document = openApiDocument(config.apiUrl);
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ $id: "openapi", components: document.components });
const validators = new Map<string, ValidateFunction>();
function validatorFor(name: string): ValidateFunction {
  let validate = validators.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
    validators.set(name, validate);
  }
  return validate;
}

/** The schema name the document gives `route`'s answer with `status`. */
function answerSchemaName(route: string, status: number): string | undefined {
  const [method = "", path = ""] = route.split(" ");
  const operation = ((document.paths as Json)[path] as Json)[method.toLowerCase()] as Json;
  const responses = operation.responses as Record<string, { content?: Record<string, { schema: Json }> }>;
  const response = responses[String(status)] ?? responses.default;
  const schema = response?.content?.["application/json"]?.schema;
  const refTo = typeof schema?.$ref === "string" ? schema.$ref : undefined;
  return refTo?.slice(refTo.lastIndexOf("/") + 1);
}

describe("the contract against live answers", () => {
  it("walks every route of the topology", { timeout: 60_000 }, async () => {
    const sandboxId = local.project.sandbox.project_id;
    // Documentation, without credentials.
    const served = await ok("GET /openapi.json", "/openapi.json", { credentials: "none" });
    // The document names the server it is served by (the in-process API's address).
    expect(served).toEqual(openApiDocument(config.apiUrl));
    expect(await ok("GET /docs", "/docs", { credentials: "none" })).toContain("swagger-ui-bundle.js");
    await ok("GET /docs/{docs_file}", "/docs/swagger-ui.css", { credentials: "none" });

    // Customers, cards and tokens.
    const { customer } = await ok("POST /customers", "/customers?expand=project", {
      body: { first_name: "Ada" },
    });
    await ok("GET /customers", "/customers?expand=tokens,project,subscriptions,transactions");
    await ok("GET /customers/{customer_id}", `/customers/${customer.id}`);
    await ok("PUT /customers/{customer_id}", `/customers/${customer.id}`, {
      body: { last_name: "Lovelace" },
    });
    const cardBody = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc2: "123" };
    const { card } = await ok("POST /cards", "/cards", { body: cardBody, credentials: "public" });
    await ok("GET /cards/{card_id}", `/cards/${card.id}`);
    await ok("PUT /cards/{card_id}", `/cards/${card.id}`, {
      body: { cvc: "321", preferred_scheme: "visa" },
      credentials: "public",
    });
    await ok("GET /iins/{iin}", "/iins/424242", { credentials: "public" });
    const { token } = await ok(
      "POST /customers/{customer_id}/tokens",
      `/customers/${customer.id}/tokens?expand=customer`,
      {
        body: { source: card.id },
      },
    );
    await ok("GET /customers/{customer_id}/tokens", `/customers/${customer.id}/tokens?expand=customer`);
    await ok(
      "GET /customers/{customer_id}/tokens/{token_id}",
      `/customers/${customer.id}/tokens/${token.id}`,
    );
    await ok(
      "PUT /customers/{customer_id}/tokens/{token_id}",
      `/customers/${customer.id}/tokens/${token.id}`,
      {
        body: { description: "main" },
      },
    );

    // Invoices and payments.
    const invoiceBody = {
      name: "Order",
      amount: "10.00",
      currency: "EUR",
      customer_id: customer.id,
      token_id: token.id,
    };
    const { invoice } = await ok("POST /invoices", "/invoices?expand=customer.tokens,token,project", {
      body: invoiceBody,
    });
    await ok("GET /invoices", "/invoices?expand=customer,transaction");
    await ok("PUT /invoices/{invoice_id}", `/invoices/${invoice.id}`, { body: { name: "Order 2" } });
    const { transaction } = await ok(
      "POST /invoices/{invoice_id}/authorize",
      `/invoices/${invoice.id}/authorize?expand=invoice,customer,token,card,project`,
      {
        body: { source: token.id, incremental: true },
      },
    );
    await ok(
      "POST /invoices/{invoice_id}/increment_authorization",
      `/invoices/${invoice.id}/increment_authorization`,
      {
        body: { amount: "1.00" },
      },
    );
    await ok("POST /invoices/{invoice_id}/capture", `/invoices/${invoice.id}/capture?expand=invoice`, {
      body: {},
    });
    await ok(
      "GET /invoices/{invoice_id}",
      `/invoices/${invoice.id}?expand=transaction,customer,token,project`,
    );
    await ok("POST /invoices/{invoice_id}/refunds", `/invoices/${invoice.id}/refunds`, {
      body: { amount: "1.00" },
    });
    await ok("GET /invoices/{invoice_id}/transactions", `/invoices/${invoice.id}/transactions?expand=card`);
    await ok("GET /transactions", "/transactions?expand=invoice,customer,token,card,project");
    await ok("GET /transactions/{transaction_id}", `/transactions/${transaction.id}`);
    const { refund } = await ok(
      "POST /transactions/{transaction_id}/refunds",
      `/transactions/${transaction.id}/refunds`,
      {
        body: { amount: "1.00", reason: "duplicate" },
      },
    );
    await ok("GET /transactions/{transaction_id}/refunds", `/transactions/${transaction.id}/refunds`);
    await ok(
      "GET /transactions/{transaction_id}/refunds/{refund_id}",
      `/transactions/${transaction.id}/refunds/${refund.id}`,
    );
    await ok(
      "GET /customers/{customer_id}/transactions",
      `/customers/${customer.id}/transactions?expand=invoice`,
    );

    const unpaid = (
      await ok("POST /invoices", "/invoices", { body: { name: "V", amount: "2.00", currency: "EUR" } })
    ).invoice;
    await ok("POST /invoices/{invoice_id}/authorize", `/invoices/${unpaid.id}/authorize`, {
      body: { source: card.id },
    });
    await ok("POST /invoices/{invoice_id}/void", `/invoices/${unpaid.id}/void`, { body: {} });
    const spare = (
      await ok("POST /invoices", "/invoices", { body: { name: "D", amount: "2.00", currency: "EUR" } })
    ).invoice;
    await ok("DELETE /invoices/{invoice_id}", `/invoices/${spare.id}`);
    // 3-D Secure without paying (two routes, one operation), and a payout to a card.
    const authenticating = (
      await ok("POST /invoices", "/invoices", { body: { name: "3DS only", amount: "2.00", currency: "EUR" } })
    ).invoice;
    await ok(
      "POST /invoices/{invoice_id}/three-d-s",
      `/invoices/${authenticating.id}/three-d-s?expand=card`,
      {
        body: { source: card.id, enable_three_d_s_2: null },
      },
    );
    await ok("POST /invoices/{invoice_id}/authenticate", `/invoices/${authenticating.id}/authenticate`, {
      body: { source: card.id },
    });
    const winnings = (
      await ok("POST /invoices", "/invoices", { body: { name: "Winnings", amount: "2.00", currency: "EUR" } })
    ).invoice;
    await ok("POST /invoices/{invoice_id}/payout", `/invoices/${winnings.id}/payout?expand=invoice`, {
      body: {
        source: card.id,
        gateway_configuration_id: null,
        force_gateway_configuration_id: null,
        metadata: { reason: "winnings" },
      },
    });

    // 3DS: a challenge page and its answer.
    const challenged = (
      await ok("POST /invoices", "/invoices", { body: { name: "3DS", amount: "2.00", currency: "EUR" } })
    ).invoice;
    const threeDsCard = (
      await ok("POST /cards", "/cards", { body: { ...cardBody, number: "4000000000000101" } })
    ).card;
    const action = (
      await ok("POST /invoices/{invoice_id}/authorize", `/invoices/${challenged.id}/authorize`, {
        body: { source: threeDsCard.id },
      })
    ).customer_action;
    const page = new URL(action.value).pathname;
    await ok("GET /3ds/{token}", page, { credentials: "none" });
    await ok("POST /3ds/{token}", page, { body: "result=approved", form: true, credentials: "none" });
    // 3DS2 in a browser: the 3DS method page of a payment from the web library (the public key).
    const web = (
      await ok("POST /invoices", "/invoices", { body: { name: "3DS2", amount: "2.00", currency: "EUR" } })
    ).invoice;
    const fingerprint = (
      await ok("POST /invoices/{invoice_id}/capture", `/invoices/${web.id}/capture`, {
        body: { source: threeDsCard.id, enable_three_d_s_2: true },
        credentials: "public",
      })
    ).customer_action;
    await ok("GET /3ds/{token}/fingerprint", new URL(fingerprint.value).pathname, { credentials: "none" });
    // 3DS at a provider (Stripe's double): the page it sends the cardholder back to.
    const stripe = await startStripeDouble();
    try {
      process.env.STRIPE_API_URL = stripe.url;
      const merchant = await createProject("Contract Stripe merchant");
      const viaStripe = api(local.url, merchant.sandbox);
      const stripeConfiguration = {
        id: await payOnlyThrough(viaStripe, "stripe", {
          secret_key: "sk_test_1",
          webhook_secret: "whsec_contract",
        }),
      };
      const order = (await viaStripe.post("/invoices", { name: "S", amount: "2.00", currency: "EUR" })).body
        .invoice;
      const stripeCard = (await viaStripe.post("/cards", { ...cardBody, number: "4000000000003220" })).body
        .card;
      const shopper = api(local.url, { project_id: merchant.sandbox.project_id, private_key: "" });
      const paid = await shopper.post(`/invoices/${order.id}/capture`, { source: stripeCard.id });
      expect(paid.body.customer_action, JSON.stringify(paid.body)).toBeDefined();
      const redirect = paid.body.customer_action;
      const back = await fetch(`${redirect.value}?answer=approve`, { redirect: "manual" });
      const returnPath = new URL(back.headers.get("location") ?? "").pathname;
      await ok("GET /3ds/{token}/return", returnPath, { credentials: "none" });
      // Stripe's webhook about that payment, signed with the configuration's secret.
      const event = JSON.stringify({
        id: "evt_contract",
        type: "payment_intent.amount_capturable_updated",
        livemode: false,
        data: { object: { id: "pi_contract", object: "payment_intent", metadata: {} } },
      });
      const t = Math.floor(Date.now() / 1000);
      const signature = createHmac("sha256", "whsec_contract").update(`${t}.${event}`).digest("hex");
      const delivered = await sendRaw(local.url, {
        method: "POST",
        target: `/gateway-webhooks/${stripeConfiguration.id}`,
        headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${signature}` },
        body: event,
      });
      recorded.push({
        route: "POST /gateway-webhooks/{gateway_configuration_id}",
        status: delivered.status,
        contentType: String(delivered.headers["content-type"] ?? ""),
        body: JSON.parse(delivered.text),
        text: delivered.text,
      });
      expect(delivered.status, delivered.text).toBe(200);
    } finally {
      await stripe.close();
    }
    await ok("GET /error-codes", "/error-codes");
    await ok("PUT /invoices/{invoice_id}/sync-with-psp", `/invoices/${challenged.id}/sync-with-psp`, {
      body: {},
    });

    // Gateway configurations and a native APM payment.
    const { gateway_configurations: natives } = await ok(
      "GET /gateway-configurations",
      "/gateway-configurations?filter=native-alternative-payment-methods&expand_merchant_accounts=true",
    );
    const native = natives[0];
    await ok(
      "GET /gateway-configurations/{gateway_configuration_id}",
      `/gateway-configurations/${native.id}`,
    );
    const apmInvoice = (
      await ok("POST /invoices", "/invoices", { body: { name: "APM", amount: "3.00", currency: "EUR" } })
    ).invoice;
    await ok(
      "POST /invoices/{invoice_id}/native-payment",
      `/invoices/${apmInvoice.id}/native-payment?expand=invoice`,
      {
        body: {
          gateway_configuration_id: `${native.id}.sandbox`,
          native_apm: { parameter_values: { email: "native-apm-success@example.com" } },
        },
      },
    );
    await ok(
      "GET /invoices/{invoice_id}/native-payment/{gateway_configuration_id}",
      `/invoices/${apmInvoice.id}/native-payment/${native.id}.sandbox`,
    );
    const { gateway_configuration: made } = await ok(
      "POST /gateways/{gateway_name}/gateway-configurations",
      "/gateways/sandbox/gateway-configurations",
      { body: { name: "Second", default_currency: "EUR", settings: { merchant_account: "acme" } } },
    );
    await ok("PUT /gateway-configurations/{gateway_configuration_id}", `/gateway-configurations/${made.id}`, {
      body: { name: "Renamed" },
    });
    // Routing rules and their simulation (the deleted configuration is not routable).
    const { routing_rules: rules } = await ok("GET /routing-rules", "/routing-rules");
    await ok("PUT /routing-rules", "/routing-rules", {
      body: {
        version: rules.version,
        rules: [
          {
            id: "eur",
            conditions: { currencies: ["EUR"] },
            action: { type: "route", gateway_configuration_ids: [made.id] },
          },
        ],
      },
    });
    await ok("POST /routing-rules/simulate", "/routing-rules/simulate", {
      body: { amount: "10.00", currency: "EUR", iin: "424242" },
    });
    await ok("PUT /routing-rules", "/routing-rules", { body: { version: rules.version + 1, rules: [] } });
    await ok(
      "DELETE /gateway-configurations/{gateway_configuration_id}",
      `/gateway-configurations/${made.id}`,
    );

    // Plans, subscriptions and the sandbox clock.
    const planBody = {
      id: "gold",
      name: "Gold",
      amount: "5.00",
      currency: "EUR",
      interval: "1m",
      trial_period: "7d",
    };
    await ok("POST /plans", "/plans", { body: planBody });
    await ok("POST /plans", "/plans", { body: { ...planBody, id: "silver" } });
    await ok("GET /plans", "/plans");
    await ok("GET /plans/{plan_id}", "/plans/gold");
    await ok("PUT /plans/{plan_id}", "/plans/gold", { body: { name: "Gold plan" } });
    await ok("DELETE /plans/{plan_id}", "/plans/silver");
    // Coupons: an amount off and a percentage off.
    await ok("POST /coupons", "/coupons", {
      body: { id: "WELCOME", amount_off: "5.00", currency: "EUR", iteration_count: 3, metadata: { a: "b" } },
    });
    await ok("POST /coupons", "/coupons", {
      body: { id: "SPRING", percent_off: 12.5, max_redemptions: 100, expires_at: "2099-01-01T00:00:00Z" },
    });
    await ok("GET /coupons", "/coupons");
    await ok("GET /coupons/{coupon_id}", "/coupons/WELCOME");
    await ok("PUT /coupons/{coupon_id}", "/coupons/WELCOME", { body: { metadata: { c: "d" } } });
    await ok("DELETE /coupons/{coupon_id}", "/coupons/SPRING");
    const { subscription } = await ok("POST /subscriptions", "/subscriptions?expand=customer,plan,token", {
      body: { customer_id: customer.id, plan_id: "gold", source: token.id },
    });
    await ok("GET /subscriptions", "/subscriptions?expand=plan");
    await ok("GET /subscriptions/{subscription_id}", `/subscriptions/${subscription.id}`);
    await ok("PUT /subscriptions/{subscription_id}", `/subscriptions/${subscription.id}`, {
      body: { metadata: { a: "b" } },
    });
    await ok(
      "GET /customers/{customer_id}/subscriptions",
      `/customers/${customer.id}/subscriptions?expand=plan`,
    );
    const { clock } = await ok("GET /sandbox/clock", "/sandbox/clock");
    await ok("POST /sandbox/clock", "/sandbox/clock", {
      body: { advance_to: new Date(Date.parse(clock.now) + 60_000).toISOString() },
    });
    // A subscription's add-ons and discounts, its customer and transactions.
    const subscriptionPath = `/subscriptions/${subscription.id}`;
    await ok("POST /subscriptions/{subscription_id}/addons", `${subscriptionPath}/addons`, {
      body: { name: "Seat", amount: "2.00", quantity: 2, prorate: true, preview: true },
    });
    const { addon } = await ok("POST /subscriptions/{subscription_id}/addons", `${subscriptionPath}/addons`, {
      body: { plan_id: "gold", quantity: 1, metadata: { seat: "1" } },
    });
    await ok("GET /subscriptions/{subscription_id}/addons", `${subscriptionPath}/addons`);
    await ok(
      "GET /subscriptions/{subscription_id}/addons/{addon_id}",
      `${subscriptionPath}/addons/${addon.id}`,
    );
    await ok(
      "PUT /subscriptions/{subscription_id}/addons/{addon_id}",
      `${subscriptionPath}/addons/${addon.id}`,
      {
        body: { quantity: 1, increment_quantity_by: 2 },
      },
    );
    await ok(
      "DELETE /subscriptions/{subscription_id}/addons/{addon_id}",
      `${subscriptionPath}/addons/${addon.id}?prorate=False&preview=None`,
    );
    const { discount } = await ok(
      "POST /subscriptions/{subscription_id}/discounts",
      `${subscriptionPath}/discounts`,
      {
        body: { coupon_id: "WELCOME" },
      },
    );
    await ok("POST /subscriptions/{subscription_id}/discounts", `${subscriptionPath}/discounts`, {
      body: { name: "Goodwill", amount: "1.00", expires_at: "2099-01-01T00:00:00Z" },
    });
    await ok("GET /subscriptions/{subscription_id}/discounts", `${subscriptionPath}/discounts`);
    await ok(
      "GET /subscriptions/{subscription_id}/discounts/{discount_id}",
      `${subscriptionPath}/discounts/${discount.id}`,
    );
    await ok(
      "DELETE /subscriptions/{subscription_id}/discounts/{discount_id}",
      `${subscriptionPath}/discounts/${discount.id}`,
    );
    await ok("PUT /subscriptions/{subscription_id}", subscriptionPath, {
      body: { plan_id: "gold", prorate: true, preview: true },
    });
    await ok("GET /subscriptions/{subscription_id}/customers", `${subscriptionPath}/customers`);
    await ok("GET /subscriptions/{subscription_id}/transactions", `${subscriptionPath}/transactions`);
    await ok(
      "DELETE /subscriptions/{subscription_id}",
      `/subscriptions/${subscription.id}?cancel_at_end=true`,
    );

    // Products: a reusable payment link, its invoices, and its link's page and button.
    const { product } = await ok("POST /products", "/products", {
      body: { name: "Gold", amount: "19.90", currency: "EUR", metadata: { sku: "G" } },
    });
    await ok("GET /products", "/products");
    await ok("GET /products/{product_id}", `/products/${product.id}`);
    await ok("PUT /products/{product_id}", `/products/${product.id}`, { body: { name: "Gold plus" } });
    await ok("POST /products/{product_id}/invoices", `/products/${product.id}/invoices?expand=project`, {
      body: {},
    });
    const link = new URL(product.url);
    await ok("GET /pay/{project_id}/{product_id}", `${link.pathname}${link.search}`, { credentials: "none" });
    await ok("POST /pay/{project_id}/{product_id}", link.pathname, {
      body: `key=${link.searchParams.get("key")}`,
      form: true,
      credentials: "none",
    });
    await ok("DELETE /products/{product_id}", `/products/${product.id}`);

    // Payouts: the close of the day the walk's payments settled on, as its job runs at midnight.
    const today = String((await ok("GET /sandbox/clock", "/sandbox/clock")).clock.now).slice(0, 10);
    await runDailyClose({ kind: "daily-close", scope: sandboxId, day: today });
    const { payouts } = await ok("GET /payouts", "/payouts?limit=1");
    await ok("GET /payouts/{payout_id}", `/payouts/${payouts[0].id}`);
    await ok("GET /payouts/{payout_id}/items", `/payouts/${payouts[0].id}/items`);
    await ok("DELETE /payouts/{payout_id}", `/payouts/${payouts[0].id}`);

    // Exports: a layout (its type's default), the choices, an export run as its queue's worker runs
    // it (into a folder here), and the SFTP settings automatic exports are delivered with.
    process.env.EXPORTS_DIR = await mkdtemp(join(tmpdir(), "contract-exports-"));
    resetExportStorage();
    const { export_layout: layout } = await ok("POST /exports/layouts", "/exports/layouts", {
      body: {
        name: "Finance",
        type: "transactions",
        is_default: true,
        configuration: {
          columns: [{ name: "id", rename: "Transaction" }, { name: "amount" }],
          time: { format: "date" },
          amount: { precision: 2, separator: "," },
        },
      },
    });
    await ok("GET /exports/layouts", "/exports/layouts");
    await ok("GET /exports/layouts/{export_layout_id}", `/exports/layouts/${layout.id}`);
    await ok("PUT /exports/layouts/{export_layout_id}", `/exports/layouts/${layout.id}`, {
      body: { name: "Finance (EU)", configuration: { columns: null, time: null, amount: null } },
    });
    await ok("GET /exports/layouts/default/{export_type}", "/exports/layouts/default/transactions");
    await ok("GET /exports/layouts/default/{export_type}", "/exports/layouts/default/payouts");
    await ok("GET /exports/layouts/options/{export_type}", "/exports/layouts/options/payout_items");
    const { export: requested } = await ok("POST /exports", "/exports", {
      body: {
        type: "transactions",
        from: `${today}T00:00:00Z`,
        to: new Date(Date.now() + 60_000).toISOString(),
      },
    });
    await runExport(sandboxId, requested.id);
    await ok("GET /exports/{export_id}", `/exports/${requested.id}`);
    await ok("GET /exports", "/exports");
    await ok("PUT /projects/{project_id}/sftp-settings", `/projects/${sandboxId}/sftp-settings`, {
      body: { endpoint: "sftp.example.com:22", username: "finance", password: "a secret", private_key: null },
    });
    await ok("GET /projects/{project_id}/sftp-settings", `/projects/${sandboxId}/sftp-settings`);
    await ok("DELETE /projects/{project_id}/sftp-settings", `/projects/${sandboxId}/sftp-settings`);
    await ok("DELETE /exports/layouts/{export_layout_id}", `/exports/layouts/${layout.id}`);

    // The smaller routes the client libraries know.
    const giftCard = (
      await ok("POST /cards", "/cards", {
        body: { number: "4000000000007007", exp_month: 12, exp_year: 2099 },
      })
    ).card;
    const giftToken = (
      await ok("POST /customers/{customer_id}/tokens", `/customers/${customer.id}/tokens`, {
        body: { source: giftCard.id },
      })
    ).token;
    await ok("GET /balances/tokens/{token_id}", `/balances/tokens/${giftToken.id}`);
    await ok("GET /cards", "/cards?limit=2");
    await ok("POST /transactions", "/transactions", { body: { limit: 2, expand: ["invoice"] } });
    await ok(
      "GET /gateways/{gateway_name}/gateway-configurations",
      "/gateways/sandbox/gateway-configurations",
    );
    const unassigned = (
      await ok("POST /invoices", "/invoices", { body: { name: "Later", amount: "1.00", currency: "EUR" } })
    ).invoice;
    await ok("POST /invoices/{invoice_id}/customers", `/invoices/${unassigned.id}/customers`, {
      body: { customer_id: customer.id },
    });
    await ok("GET /invoices/{invoice_id}/customers", `/invoices/${unassigned.id}/customers?expand=project`);

    // Events, webhooks and the project's settings.
    await ok("PUT /projects/{project_id}", `/projects/${sandboxId}`, {
      body: { webhook_url: "" },
    });
    await ok("GET /projects/{project_id}", `/projects/${sandboxId}`);
    const { statistics } = await ok("GET /statistics", "/statistics?interval=day");
    expect(statistics.series.length).toBeGreaterThan(0);
    const found = await ok("GET /search", "/search?query=4242&limit=2");
    expect(found.transactions.length).toBeGreaterThan(0);
    const { activities } = await ok("GET /activities", "/activities?limit=1");
    await ok("GET /activities/{activity_id}", `/activities/${activities[0].id}`);
    const created = await ok("POST /api-keys", "/api-keys", { body: { name: "Contract walk" } });
    const rolled = await ok("POST /api-keys/{api_key_id}/roll", `/api-keys/${created.api_key.id}/roll`, {
      body: { overlap_seconds: 0 },
    });
    await ok("GET /api-keys", "/api-keys");
    await ok("DELETE /api-keys/{api_key_id}", `/api-keys/${rolled.api_key.id}`);

    // The dashboard (shared/dashboard): the first owner from their one-time link, then every route
    // with the session cookie and its CSRF token, as the page sends them.
    {
      const browser: { cookie?: string; csrf?: string } = {};
      const dashboard = async (route: string, target: string, body?: Json) => {
        const headers: Record<string, string> = {};
        if (browser.cookie) headers.cookie = `__Host-session=${browser.cookie}`;
        if (browser.csrf) headers["x-csrf-token"] = browser.csrf;
        const answer = await call(route, target, { credentials: "none", headers, ...(body ? { body } : {}) });
        expect(answer.status, `${route}: ${answer.text.slice(0, 500)}`).toBeLessThan(400);
        const cookie = answer.cookies.map((set) => /^__Host-session=([^;]+)/.exec(set)?.[1]).find(Boolean);
        if (cookie) browser.cookie = cookie;
        if (answer.body.session?.csrf_token) browser.csrf = answer.body.session.csrf_token;
        return answer.body;
      };
      const ownerEmail = `contract-${Date.now()}@example.com`;
      const { token: ownerToken } = await firstOwner(local.project.live.project_id, ownerEmail, new Date());
      await dashboard("POST /dashboard/accept", "/dashboard/accept", {
        token: ownerToken,
        password: PASSWORD,
      });
      await dashboard("GET /dashboard/session", "/dashboard/session");
      const { secret } = await dashboard("POST /dashboard/totp", "/dashboard/totp", {});
      await dashboard("POST /dashboard/totp/confirm", "/dashboard/totp/confirm", { code: totpCode(secret) });
      const authenticator = new SoftwareAuthenticator(local.url);
      const registration = await dashboard(
        "POST /dashboard/passkeys/options",
        "/dashboard/passkeys/options",
        {},
      );
      await dashboard("POST /dashboard/passkeys", "/dashboard/passkeys", {
        credential: authenticator.create(registration.options),
      });
      const { invitation, link } = await dashboard("POST /dashboard/invitations", "/dashboard/invitations", {
        email: `contract-support-${Date.now()}@example.com`,
        role: "support",
      });
      await dashboard("GET /dashboard/users", "/dashboard/users");
      await dashboard("GET /dashboard/audit-log", "/dashboard/audit-log?limit=5");
      await dashboard("POST /dashboard/sign-out", "/dashboard/sign-out", {});
      await dashboard("POST /dashboard/sign-in", "/dashboard/sign-in", {
        email: ownerEmail,
        password: PASSWORD,
      });
      const request = await dashboard(
        "POST /dashboard/sign-in/passkey/options",
        "/dashboard/sign-in/passkey/options",
        {},
      );
      await dashboard("POST /dashboard/sign-in/passkey", "/dashboard/sign-in/passkey", {
        credential: authenticator.get(request.options),
      });
      const other = { ...browser };
      Object.assign(browser, { cookie: undefined, csrf: undefined });
      const { user: invited } = await dashboard("POST /dashboard/accept", "/dashboard/accept", {
        token: tokenOf(link),
        password: PASSWORD,
      });
      expect(invited.email).toBe(invitation.email);
      Object.assign(browser, other);
      await dashboard("PUT /dashboard/users/{user_id}", `/dashboard/users/${invited.id}`, {
        role: "read-only",
      });
      await dashboard("DELETE /dashboard/users/{user_id}", `/dashboard/users/${invited.id}`);
      await dashboard("POST /dashboard/sign-out-everywhere", "/dashboard/sign-out-everywhere", {});
      // The TOTP step last: its code must be of a step after the enrolment's.
      const later = new Date(Date.now() + 30_000);
      vi.spyOn(serviceClock, "now").mockReturnValue(later);
      await dashboard("POST /dashboard/sign-in", "/dashboard/sign-in", {
        email: ownerEmail,
        password: PASSWORD,
      });
      await dashboard("POST /dashboard/sign-in/totp", "/dashboard/sign-in/totp", {
        code: totpCode(secret, later),
      });
      vi.restoreAllMocks();
    }
    const { project: supervised } = await ok("POST /supervised-projects", "/supervised-projects", {
      body: { name: "Sub-merchant", dunning_configuration: [{ action: "retry", delay_in_days: 2 }] },
    });
    await ok("GET /supervised-projects", "/supervised-projects");
    await ok("DELETE /projects/{project_id}", `/projects/${supervised.id}`);
    const { alternative_merchant_certificate: certificate } = await ok(
      "POST /projects/applepay/alternative-merchant-certificates",
      "/projects/applepay/alternative-merchant-certificates",
      { body: {} },
    );
    await ok(
      "GET /projects/applepay/alternative-merchant-certificates",
      "/projects/applepay/alternative-merchant-certificates",
    );
    await ok(
      "GET /projects/applepay/alternative-merchant-certificates/{certificate_id}",
      `/projects/applepay/alternative-merchant-certificates/${certificate.id}`,
    );
    await ok(
      "PUT /projects/applepay/alternative-merchant-certificates/{certificate_id}",
      `/projects/applepay/alternative-merchant-certificates/${certificate.id}`,
      { body: { certificate: await appleCertificateFor(certificate.csr) } },
    );
    await ok(
      "DELETE /projects/applepay/alternative-merchant-certificates/{certificate_id}",
      `/projects/applepay/alternative-merchant-certificates/${certificate.id}`,
    );
    const { events } = await ok("GET /events", "/events?limit=1");
    await ok("GET /events/{event_id}", `/events/${events[0].id}`);
    await ok("GET /events/{event_id}/webhooks", `/events/${events[0].id}/webhooks`);
    await ok("POST /events/{event_id}/webhooks", `/events/${events[0].id}/webhooks`, { body: {} });

    // The hosted checkout page of an invoice (its `url`) and the scripts served to browsers.
    const checkout = new URL(invoice.url);
    await ok("GET /checkout/{project_id}/{invoice_id}", `${checkout.pathname}${checkout.search}`, {
      credentials: "none",
    });
    await ok("GET /assets/{asset}", "/assets/payments.js", { credentials: "none" });
    expect(await ok("GET /dashboard", "/dashboard", { credentials: "none" })).toContain(
      "assets/dashboard.js",
    );

    // Deletions last.
    await ok(
      "DELETE /customers/{customer_id}/tokens/{token_id}",
      `/customers/${customer.id}/tokens/${token.id}`,
    );
    await ok("DELETE /cards/{card_id}", `/cards/${card.id}`);
    const other = (await ok("POST /customers", "/customers", { body: {} })).customer;
    await ok("DELETE /customers/{customer_id}", `/customers/${other.id}`);

    // Errors, in the one error shape.
    await call("GET /customers/{customer_id}", `/customers/${newId("customer")}`);
    await call("POST /invoices", "/invoices", { body: { name: "", amount: "x" } });
    await call("GET /customers", "/customers", { credentials: "none" });
    await call("GET /docs/{docs_file}", "/docs/missing.js", { credentials: "none" });

    const succeeded = new Set(recorded.filter((answer) => answer.status < 400).map((answer) => answer.route));
    expect(routes.map(routeKey).filter((key) => !succeeded.has(key))).toEqual([]);
  });

  it("answers, on every route walked, what the document says", () => {
    expect(recorded.length).toBeGreaterThan(routes.length);
    const mismatches: string[] = [];
    for (const answer of recorded) {
      const [method = "", path = ""] = answer.route.split(" ");
      const spec = contractOf({ method: method as "GET", path });
      if (spec.answer.kind === "document" && answer.status < 400) {
        if (!answer.contentType.startsWith(spec.answer.contentType.split("/")[0] ?? "")) {
          if (spec.answer.contentType !== "application/octet-stream")
            mismatches.push(`${answer.route} ${answer.status}: content type ${answer.contentType}`);
        }
        continue;
      }
      const name = answerSchemaName(answer.route, answer.status);
      if (!name) {
        mismatches.push(`${answer.route} ${answer.status}: the document has no answer for this status`);
        continue;
      }
      const validate = validatorFor(name);
      if (!validate(answer.body)) {
        mismatches.push(`${answer.route} ${answer.status} (${name}): ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("is what the schemas say: a presenter's extra field would not pass", () => {
    const customer = recorded.find((answer) => answer.route === "GET /customers/{customer_id}")?.body;
    const validate = validatorFor("CustomersGetAnswer");
    expect(validate(customer)).toBe(true);
    expect(validate({ ...customer, customer: { ...customer.customer, secret: "x" } })).toBe(false);
  });

  it("matches each handler: a route expands exactly when its contract says, and takes the credentials it says", async () => {
    const disagreements: string[] = [];
    for (const route of routes.filter((candidate) => !candidate.unauthenticated)) {
      const spec = contractOf(route);
      const target = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => aWellFormed(name));
      const key = routeKey(route);
      const bogus = await call(key, `${target}?expand=no-such-field`, { body: {} });
      const refused = bogus.status === 400 && bogus.body.error_type === "request.validation.invalid-expand";
      if (refused !== Boolean(spec.expand)) disagreements.push(`${key}: expand refused ${refused}`);
      // With a source, as a browser pays: the public key is held to what its access lets it send.
      const publicKey = await call(key, target, {
        body: { source: aWellFormed("card_id") },
        credentials: "public",
      });
      if ((publicKey.status !== 401) !== (spec.credentials === "project-id")) {
        disagreements.push(`${key}: the public key answered ${publicKey.status}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});
