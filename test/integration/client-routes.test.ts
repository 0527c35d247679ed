import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 21: the smaller routes the official clients know (`../shared/reference/client-compatibility.md`,
 * "Routes the clients know that are not served yet"), sent as the libraries send them.
 */
const local = useInProcessApi("Client routes test");

async function environment(name = "Client routes") {
  const project = await createProject(name);
  const credentials = project.sandbox;
  const client = api(local.url, credentials);
  /** A JSON body as the Python, PHP and Ruby libraries send it: every key they know, null when unset. */
  const raw = async (method: string, target: string, body?: Record<string, unknown>) => {
    const answer = await sendRaw(local.url, {
      method,
      target,
      headers: {
        authorization: basicAuthorization(credentials.project_id, credentials.private_key),
        accept: "*/*",
        ...(body ? { "content-type": "application/json" } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
    return { status: answer.status, body: JSON.parse(answer.text) as any };
  };
  return { client, raw, scope: credentials.project_id, project };
}

const CARD = { number: "4242424242424242", exp_month: 12, exp_year: 2099 };

async function card(client: Client, fields: Record<string, unknown> = {}) {
  const { status, body } = await client.post("/cards", { ...CARD, ...fields });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.card;
}

async function invoice(client: Client, fields: Record<string, unknown> = {}) {
  const { status, body } = await client.post("/invoices", {
    name: "Order",
    amount: "12.00",
    currency: "EUR",
    ...fields,
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.invoice;
}

describe("GET /cards", () => {
  it("lists the environment's cards newest first, with paging and an exact total, and drops a deleted one", async () => {
    const { client, raw } = await environment();
    const empty = await raw("GET", "/cards?&filter=&limit=&end_before=&start_after=");
    expect(empty.body).toMatchObject({ success: true, cards: [], count: 0, total_count: 0, has_more: false });

    const cards = [];
    for (const name of ["A", "B", "C"]) cards.push(await card(client, { name }));
    const listed = await client.get("/cards?limit=2");
    expect(listed.body).toMatchObject({ success: true, count: 2, total_count: 3, has_more: true });
    expect(listed.body.cards.map((found: { id: string }) => found.id)).toEqual([cards[2].id, cards[1].id]);
    expect(listed.body.cards[0]).toEqual((await client.get(`/cards/${cards[2].id}`)).body.card);
    expect(JSON.stringify(listed.body)).not.toContain("4242424242424242");
    const next = await client.get(`/cards?limit=2&start_after=${cards[1].id}`);
    expect(next.body.cards.map((found: { id: string }) => found.id)).toEqual([cards[0].id]);

    expect((await client.del(`/cards/${cards[1].id}`)).status).toBe(200);
    const after = await client.get("/cards");
    expect(after.body.total_count).toBe(2);
    expect(after.body.cards.map((found: { id: string }) => found.id)).toEqual([cards[2].id, cards[0].id]);
  });

  it("never lists another project's cards", async () => {
    const first = await environment("Cards one");
    const second = await environment("Cards two");
    await card(first.client);
    const listed = await second.client.get("/cards");
    expect(listed.body).toMatchObject({ cards: [], total_count: 0 });
  });
});

describe("GET /gateways/{gateway_name}/gateway-configurations", () => {
  it("lists the configurations of that gateway only, and a 404 for a gateway that does not exist", async () => {
    const { client, raw } = await environment();
    const made = await client.post("/gateways/stripe/gateway-configurations", {
      name: "Stripe",
      settings: { secret_key: "sk_test_x" },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const sandbox = await raw(
      "GET",
      "/gateways/sandbox/gateway-configurations?filter=&limit=&expand_merchant_accounts=None",
    );
    expect(sandbox.status).toBe(200);
    expect(sandbox.body).toMatchObject({ success: true, count: 2, total_count: 2 });
    expect(
      new Set(
        sandbox.body.gateway_configurations.map((found: { gateway_name: string }) => found.gateway_name),
      ),
    ).toEqual(new Set(["sandbox"]));
    const stripe = await client.get("/gateways/stripe/gateway-configurations");
    expect(stripe.body.gateway_configurations).toEqual([
      expect.objectContaining({ id: made.body.gateway_configuration.id, gateway_name: "stripe" }),
    ]);
    const cardsOnly = await client.get("/gateways/sandbox/gateway-configurations?filter=card-payments");
    expect(cardsOnly.body.gateway_configurations).toEqual([
      expect.objectContaining({ payment_method: "card" }),
    ]);
    const unknown = await client.get("/gateways/paypal-classic/gateway-configurations");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_type).toBe("resource.gateway.not-found");
  });
});

describe("POST /transactions", () => {
  it("answers the list GET /transactions answers, its options read from the JSON body", async () => {
    const { client, raw } = await environment();
    const paid = [];
    for (let index = 0; index < 3; index++) {
      const made = await invoice(client);
      const source = await card(client);
      const authorized = await client.post(`/invoices/${made.id}/authorize`, { source: source.id });
      expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
      paid.push(authorized.body.transaction);
    }
    const listed = await raw("POST", "/transactions", {
      filter: null,
      limit: 2,
      end_before: null,
      start_after: null,
      expand: ["invoice"],
    });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const viaGet = await client.get("/transactions?limit=2&expand=invoice");
    expect(listed.body).toEqual(viaGet.body);
    expect(listed.body).toMatchObject({ success: true, count: 2, has_more: true, total_count: 3 });
    expect(listed.body.transactions[0]).toMatchObject({
      id: paid[2].id,
      invoice: { id: paid[2].invoice_id },
    });
    const rest = await raw("POST", "/transactions", { limit: 2, start_after: paid[1].id });
    expect(rest.body.transactions.map((found: { id: string }) => found.id)).toEqual([paid[0].id]);
  });
});

describe("/invoices/{invoice_id}/customers", () => {
  it("sets the invoice's customer before payment, reads it back, and refuses a customer of another project", async () => {
    const { client, raw } = await environment();
    const other = await environment("Another project");
    const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
    const foreign = (await other.client.post("/customers", { first_name: "Eve" })).body.customer;
    const made = await invoice(client);

    const none = await client.get(`/invoices/${made.id}/customers`);
    expect(none.status).toBe(404);
    expect(none.body.error_type).toBe("resource.customer.not-found");

    const refused = await raw("POST", `/invoices/${made.id}/customers`, { customer_id: foreign.id });
    expect(refused.status).toBe(404);
    expect((await client.get(`/invoices/${made.id}`)).body.invoice.customer_id).toBeNull();

    const missing = await raw("POST", `/invoices/${made.id}/customers`, { customer_id: null });
    expect(missing.status).toBe(400);
    expect(missing.body.invalid_fields).toEqual([expect.objectContaining({ name: "customer_id" })]);

    const set = await raw("POST", `/invoices/${made.id}/customers`, { customer_id: customer.id });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ success: true, customer: { id: customer.id, first_name: "Ada" } });
    expect((await client.get(`/invoices/${made.id}`)).body.invoice.customer_id).toBe(customer.id);
    const read = await client.get(`/invoices/${made.id}/customers?expand=project`);
    expect(read.body.customer).toMatchObject({ id: customer.id, project: { id: expect.any(String) } });

    expect((await other.client.get(`/invoices/${made.id}/customers`)).status).toBe(404);
  });

  it("cannot change the customer of an invoice once a payment was attempted", async () => {
    const { client } = await environment();
    const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
    const made = await invoice(client);
    const source = await card(client);
    expect((await client.post(`/invoices/${made.id}/authorize`, { source: source.id })).status).toBe(200);
    const refused = await client.post(`/invoices/${made.id}/customers`, { customer_id: customer.id });
    expect(refused.status).toBe(409);
    expect(refused.body.error_type).toBe("request.invoice.payment-attempted");
  });
});

describe("the activity log", () => {
  it("records each change of the setup with who made it, in the change's own write, and nothing for a refused one", async () => {
    const { client, raw, scope } = await environment();
    const webhook = await client.put(
      `/projects/${scope}`,
      { webhook_url: "https://93.184.215.14/hooks" },
      {
        headers: { "user-agent": "processout-python/7.0" },
      },
    );
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(200);
    const made = await client.post("/gateways/sandbox/gateway-configurations", { name: "Second" });
    const id = made.body.gateway_configuration.id;
    expect((await client.put(`/gateway-configurations/${id}`, { enabled: false })).status).toBe(200);
    const rules = await client.put("/routing-rules", { version: 0, default_order: [] });
    expect(rules.status, JSON.stringify(rules.body)).toBe(200);
    expect((await client.del(`/gateway-configurations/${id}`)).status).toBe(200);
    // Refused changes leave nothing in the log.
    expect((await client.put(`/projects/${scope}`, { webhook_url: "not a url" })).status).toBe(400);
    expect((await client.put("/routing-rules", { version: 0 })).status).toBe(409);

    const listed = await raw("GET", "/activities?&filter=&limit=&end_before=&start_after=");
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ success: true, count: 5, total_count: 5, has_more: false });
    expect(listed.body.activities.map((activity: { type: string }) => activity.type)).toEqual([
      "gateway_configuration.deleted",
      "routing_rules.replaced",
      "gateway_configuration.updated",
      "gateway_configuration.created",
      "project.updated",
    ]);
    const first = listed.body.activities[4];
    expect(first).toEqual({
      id: expect.stringMatching(/^act_/),
      project_id: scope,
      sandbox: true,
      type: "project.updated",
      title: "Webhook URL set to https://93.184.215.14/hooks",
      subject: { type: "project", id: scope },
      actor: {
        credential: "private-key",
        user: null,
        request_id: webhook.headers.get("x-request-id"),
        ip_address: expect.any(String),
        user_agent: "processout-python/7.0",
      },
      created_at: expect.any(String),
    });
    expect(listed.body.activities[2]).toMatchObject({
      title: expect.stringContaining("updated (enabled)"),
      subject: { type: "gateway_configuration", id },
    });
    const one = await client.get(`/activities/${first.id}`);
    expect(one.body).toEqual({ success: true, activity: first });
  });

  it("records a product's creation, change and deletion with the change's own write", async () => {
    const { client } = await environment();
    const product = (await client.post("/products", { name: "Gold", amount: "19.90", currency: "EUR" })).body
      .product;
    expect((await client.put(`/products/${product.id}`, { name: "Gold plus" })).status).toBe(200);
    expect((await client.del(`/products/${product.id}`)).status).toBe(200);
    const titles = (await client.get("/activities")).body.activities.map(
      (activity: { type: string; title: string; subject: { id: string } }) => [
        activity.type,
        activity.title,
        activity.subject.id,
      ],
    );
    expect(titles).toEqual([
      ["product.deleted", 'Product "Gold plus" deleted: its link stops working', product.id],
      ["product.updated", 'Product "Gold plus" updated (name)', product.id],
      ["product.created", 'Product "Gold" created (19.90 EUR)', product.id],
    ]);
  });

  it("is the environment's own: another project's entries answer 404 and are never listed", async () => {
    const mine = await environment("Activities one");
    const theirs = await environment("Activities two");
    await theirs.client.put(`/projects/${theirs.scope}`, { webhook_url: "https://93.184.215.15/hooks" });
    const entry = (await theirs.client.get("/activities")).body.activities[0];
    expect((await mine.client.get(`/activities/${entry.id}`)).status).toBe(404);
    expect((await mine.client.get("/activities")).body).toMatchObject({ activities: [], total_count: 0 });
    expect((await mine.client.get("/activities/act_nope")).status).toBe(404);
  });
});

describe("the listing options the Python client sends as None, and a filter no list reads", () => {
  it("takes None as not given, and refuses a filter the list would ignore, naming it", async () => {
    const { raw } = await environment();
    const target = "?expand=None&filter=None&limit=None&end_before=None&start_after=None";
    for (const list of ["/customers", "/cards", "/transactions", "/activities", "/gateway-configurations"]) {
      const answer = await raw("GET", `${list}${target}`);
      expect(answer.status, `${list}: ${JSON.stringify(answer.body)}`).toBe(200);
      expect(answer.body.limit).toBe(10);
    }
    const filtered = await raw("POST", "/transactions", { filter: "status == 'completed'", limit: 10 });
    expect(filtered.status).toBe(400);
    expect(filtered.body.invalid_fields).toEqual([expect.objectContaining({ name: "filter" })]);
    expect((await raw("GET", "/customers?filter=email:ada@example.com")).status).toBe(400);
  });
});
