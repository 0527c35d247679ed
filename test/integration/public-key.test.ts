import { describe, expect, it } from "vitest";
import { routeKey, routes } from "../../lib/topology.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { aWellFormed, fillPath, parametersOf } from "../support/paths.ts";

const local = useInProcessApi("Public key test");

/**
 * The client-side operations: the only routes the public key (the project id alone) may call. The
 * list is written here, not read from the code, so that a route opened by mistake fails this test.
 */
const PUBLIC_KEY_ROUTES = new Set([
  "POST /cards",
  "PUT /cards/{card_id}",
  "GET /iins/{iin}",
  "POST /invoices/{invoice_id}/authorize",
  "POST /invoices/{invoice_id}/capture",
  "POST /invoices/{invoice_id}/increment_authorization",
  "PUT /customers/{customer_id}/tokens/{token_id}",
  "GET /gateway-configurations",
  "POST /invoices/{invoice_id}/native-payment",
  "GET /invoices/{invoice_id}/native-payment/{gateway_configuration_id}",
]);

const publicKey = (environment: "sandbox" | "live"): Client =>
  api(local.url, { project_id: local.project[environment].project_id, private_key: "" });

const send = (client: Client, method: string, path: string, body: Record<string, unknown> = {}) => {
  if (method === "GET") return client.get(path);
  if (method === "DELETE") return client.del(path);
  if (method === "PUT") return client.put(path, body);
  return client.post(path, body);
};

async function card(client: Client, number = "4242424242424242"): Promise<string> {
  const { body } = await client.post("/cards", { number, exp_month: "12", exp_year: "2099", cvc2: "123" });
  return body.card.id;
}

async function invoice(fields: Record<string, unknown> = {}): Promise<string> {
  const { body } = await local.sandbox.post("/invoices", {
    name: "Order 7",
    amount: "10.00",
    currency: "EUR",
    ...fields,
  });
  return body.invoice.id;
}

const transactionOf = async (invoiceId: string) =>
  (await local.sandbox.get(`/invoices/${invoiceId}/transactions`)).body.transaction;

describe("the public key on every route", () => {
  const closed = routes.filter((route) => !route.unauthenticated && !PUBLIC_KEY_ROUTES.has(routeKey(route)));
  const cases = closed.flatMap((route) =>
    (["sandbox", "live"] as const).map((environment) => [routeKey(route), environment, route] as const),
  );

  it.each(cases)("%s refuses the %s public key with 401", async (_key, environment, route) => {
    const path = fillPath(
      route.path,
      Object.fromEntries(parametersOf(route.path).map((name) => [name, aWellFormed(name)])),
    );

    const answer = await send(publicKey(environment), route.method, path, { source: "card_x" });

    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ success: false, error_type: "request.authentication.invalid" });
    expect(answer.body.message).toContain("needs the private key");
  });

  it("opens exactly the client-side operations, each a route of the topology", () => {
    const declared = new Set(routes.map(routeKey));
    for (const key of PUBLIC_KEY_ROUTES) expect(declared, key).toContain(key);
  });
});

describe("the client-side operations with the public key", () => {
  const browser = () => publicKey("sandbox");

  it("tokenizes a card", async () => {
    const { status, body } = await browser().post("/cards", {
      number: "4242424242424242",
      exp_month: "12",
      exp_year: "2030",
      cvc2: "123",
    });

    expect(status).toBe(200);
    expect(body.card).toMatchObject({ last_4_digits: "4242", exp_month: 12, exp_year: 2030 });
  });

  it("changes a saved card's CVC and is answered the card without its name, fingerprint or metadata", async () => {
    const saved = (
      await local.sandbox.post("/cards", {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2099,
        name: "Ada Lovelace",
        metadata: { crm_id: "secret-42" },
      })
    ).body.card;
    const customer = (await local.sandbox.post("/customers", { first_name: "Ada" })).body.customer.id;
    await local.sandbox.post(`/customers/${customer}/tokens`, { source: saved.id });

    const changed = await browser().put(`/cards/${saved.id}`, { cvc: "123" });

    expect(changed.status).toBe(200);
    expect(changed.body.card).toMatchObject({ id: saved.id, last_4_digits: "4242", cvc_check: "pending" });
    expect(changed.body.card).not.toHaveProperty("name");
    expect(changed.body.card).not.toHaveProperty("fingerprint");
    expect(changed.body.card.metadata).toEqual({});
    expect(JSON.stringify(changed.body)).not.toContain("secret-42");
    expect(JSON.stringify(changed.body)).not.toContain("Ada");
  });

  it("cannot read a card through an empty PUT /cards/{id}", async () => {
    const saved = (
      await local.sandbox.post("/cards", {
        number: "4242424242424242",
        exp_month: 12,
        exp_year: 2099,
        name: "Ada Lovelace",
      })
    ).body.card;

    for (const body of [{}, { name: "Mallory", metadata: { a: "b" } }, { cvc: "" }]) {
      const answer = await browser().put(`/cards/${saved.id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toMatchObject({ error_type: "request.validation.missing-cvc" });
      expect(answer.body.invalid_fields).toEqual([{ name: "cvc", message: expect.any(String) }]);
      expect(answer.body).not.toHaveProperty("card");
    }
    // Nothing changed: the merchant still reads the card as it was.
    expect((await local.sandbox.get(`/cards/${saved.id}`)).body.card).toMatchObject({
      name: "Ada Lovelace",
      cvc_check: "unavailable",
    });
  });

  it("pays an invoice with /capture and is answered nothing of the transaction", async () => {
    const invoiceId = await invoice();

    const { status, body } = await browser().post(`/invoices/${invoiceId}/capture`, {
      source: await card(browser()),
      enable_three_d_s_2: true,
      amount: "1.00",
      metadata: { set_by: "shopper" },
    });

    expect(status).toBe(200);
    // Nothing to do: no customer_action at all (the web library fails on an empty one).
    expect(body).toEqual({ success: true });
    const transaction = await transactionOf(invoiceId);
    expect(transaction).toMatchObject({ status: "completed", captured_amount: "10.00", metadata: {} });
  });

  it("authorizes an invoice with /authorize, then the merchant's server captures it", async () => {
    const invoiceId = await invoice();

    const { status } = await browser().post(`/invoices/${invoiceId}/authorize`, {
      source: await card(browser()),
    });

    expect(status).toBe(200);
    expect((await transactionOf(invoiceId)).status).toBe("authorized");
    const refused = await browser().post(`/invoices/${invoiceId}/capture`, {});
    expect(refused.status).toBe(401);
    expect(refused.body.message).toContain("a payment needs a source");
    expect((await transactionOf(invoiceId)).status).toBe("authorized");
    expect((await local.sandbox.post(`/invoices/${invoiceId}/capture`, {})).status).toBe(200);
  });

  it("is answered the customer action to perform, and only it, when 3-D Secure asks for one", async () => {
    const invoiceId = await invoice();

    const { status, body } = await browser().post(`/invoices/${invoiceId}/capture`, {
      source: await card(browser(), "4000000000000101"),
    });

    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(["customer_action", "success"]);
    expect(body.customer_action).toMatchObject({ type: "url", value: expect.stringContaining("/3ds/") });
  });

  it("increments an incremental authorization and is answered the outcome alone", async () => {
    const invoiceId = await invoice();
    await browser().post(`/invoices/${invoiceId}/authorize`, {
      source: await card(browser()),
      incremental: true,
    });

    const { status, body } = await browser().post(`/invoices/${invoiceId}/increment_authorization`, {
      amount: 2.5,
    });

    expect(status).toBe(200);
    expect(body).toEqual({ success: true });
    expect((await transactionOf(invoiceId)).authorized_amount).toBe("12.50");
  });

  it("attaches a source to a pending customer token, and nothing else of the token", async () => {
    const customer = (await local.sandbox.post("/customers", { first_name: "Ada" })).body.customer.id;
    const pending = (
      await local.sandbox.post(`/customers/${customer}/tokens`, { verify: true, metadata: { tier: "gold" } })
    ).body.token;

    const { status, body } = await browser().put(`/customers/${customer}/tokens/${pending.id}`, {
      source: await card(browser()),
      metadata: { tier: "free" },
      description: "changed by the shopper",
    });

    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(["success", "token"]);
    expect(body.token).toMatchObject({ id: pending.id, verification_status: "success" });
    const stored = (await local.sandbox.get(`/customers/${customer}/tokens/${pending.id}`)).body.token;
    expect(stored).toMatchObject({ metadata: { tier: "gold" }, description: null });
    const withoutSource = await browser().put(`/customers/${customer}/tokens/${pending.id}`, {
      metadata: { tier: "free" },
    });
    expect(withoutSource.status).toBe(401);
  });

  it("lists the enabled gateway configurations without their settings, whatever it asks", async () => {
    const disabled = await local.sandbox.post("/gateways/sandbox/gateway-configurations", {
      name: "Disabled one",
      enabled: false,
      settings: { merchant_account: "acct_secretish" },
    });
    expect(disabled.status).toBe(200);

    const { status, body } = await browser().get("/gateway-configurations?with_disabled=true");

    expect(status).toBe(200);
    const listed = body.gateway_configurations as Record<string, unknown>[];
    expect(listed.length).toBeGreaterThan(0);
    for (const configuration of listed) {
      expect(configuration.enabled).toBe(true);
      expect(configuration).not.toHaveProperty("settings");
    }
    expect(listed.map((configuration) => configuration.id)).not.toContain(
      disabled.body.gateway_configuration.id,
    );
  });

  it("takes the native APM steps and is answered the step alone", async () => {
    const invoiceId = await invoice({ metadata: { skip_processoutjs: "true" } });
    const apm = (await browser().get("/gateway-configurations?filter=native-alternative-payment-methods"))
      .body.gateway_configurations[0];
    const reference = `${apm.id}.${apm.gateway_name}`;

    const step = await browser().post(`/invoices/${invoiceId}/native-payment`, {
      gateway_configuration_id: reference,
      native_apm: { parameter_values: { email: "native-apm-success@example.com" } },
    });
    const details = await browser().get(`/invoices/${invoiceId}/native-payment/${reference}`);

    expect(step.status).toBe(200);
    expect(Object.keys(step.body).sort()).toEqual(["native_apm", "success"]);
    expect(step.body.native_apm.state).toBe("CUSTOMER_INPUT");
    expect(details.status).toBe(200);
    expect(Object.keys(details.body).sort()).toEqual(["native_apm", "success"]);
  });

  it("replays an idempotent payment with the answer it was shown, never more", async () => {
    const invoiceId = await invoice();
    const source = await card(browser());

    const first = await browser().post(
      `/invoices/${invoiceId}/capture`,
      { source },
      { idempotencyKey: "pay-1" },
    );
    const replay = await browser().post(
      `/invoices/${invoiceId}/capture`,
      { source },
      { idempotencyKey: "pay-1" },
    );

    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    expect(replay.body).not.toHaveProperty("transaction");
  });
});
