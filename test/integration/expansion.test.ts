import { describe, expect, it } from "vitest";
import { dynamoCallCount } from "../../shared/db/client.ts";
import { expandAnswer } from "../../shared/expansion/answer.ts";
import { EXPANDABLE, expandablePaths } from "../../shared/expansion/fields.ts";
import type { ApiRequest } from "../../shared/http/api.ts";
import { ApiError } from "../../shared/http/errors.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, type RequestBody, useInProcessApi } from "../e2e/harness.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 13: `expand` on every answer that presents a resource (creates, updates, payments, tokens,
 * lists), in the four shapes client libraries send, with the round trips a page costs.
 */
const local = useInProcessApi("Expansion test");

type Body = Record<string, unknown>;

/** One environment per test that counts or lists: totals and pages are its own. */
async function environment(): Promise<{ client: Client; projectId: string; privateKey: string }> {
  const project = await createProject("Expansion");
  return {
    client: api(local.url, project.sandbox),
    projectId: project.sandbox.project_id,
    privateKey: project.sandbox.private_key,
  };
}

/**
 * The four shapes of `expand`: `expand[]=a&expand[]=b`, `expand=a&expand=b`, `expand=a,b` in the
 * query string, and a list in the body (JSON, as server libraries send it; form-encoded too).
 */
const SHAPES = ["query brackets", "query repeated", "query commas", "json body", "form body"] as const;
type Shape = (typeof SHAPES)[number];

function shaped(shape: Shape, path: string, paths: string[], body: Body = {}) {
  const join = (query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`;
  switch (shape) {
    case "query brackets":
      return { path: join(paths.map((p) => `expand[]=${p}`).join("&")), body, form: false };
    case "query repeated":
      return { path: join(paths.map((p) => `expand=${p}`).join("&")), body, form: false };
    case "query commas":
      return { path: join(`expand=${paths.join(",")}`), body, form: false };
    case "json body":
      return { path, body: { ...body, expand: paths }, form: false };
    case "form body":
      return { path, body: { ...body, expand: paths }, form: true };
  }
}

/** Sends `method` with `expand` in `shape`; a GET or DELETE carries its body as one library does. */
async function send(
  env: { projectId: string; privateKey: string },
  method: "GET" | "POST" | "PUT" | "DELETE",
  shape: Shape,
  path: string,
  paths: string[],
  body: Body = {},
) {
  const request = shaped(shape, path, paths, body);
  const hasBody = Object.keys(request.body).length > 0;
  const encoded = request.form
    ? new URLSearchParams(
        Object.entries(request.body).flatMap(([key, value]): [string, string][] =>
          Array.isArray(value) ? value.map((item) => [`${key}[]`, String(item)]) : [[key, String(value)]],
        ),
      ).toString()
    : JSON.stringify(request.body);
  const answer = await sendRaw(local.url, {
    method,
    target: request.path,
    headers: {
      authorization: basicAuthorization(env.projectId, env.privateKey),
      ...(hasBody
        ? { "content-type": request.form ? "application/x-www-form-urlencoded" : "application/json" }
        : {}),
    },
    ...(hasBody ? { body: encoded } : {}),
  });
  return { status: answer.status, body: JSON.parse(answer.text) };
}

async function post(client: Client, path: string, body: RequestBody = {}) {
  const answer = await client.post(path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

const card = async (client: Client, number = "4242424242424242") =>
  (await post(client, "/cards", { number, exp_month: 12, exp_year: 2099, cvc2: "123" })).card;

/** A customer with a token of a card (its default). */
async function customerWithToken(client: Client, fields: Body) {
  const customer = (await post(client, "/customers", fields)).customer;
  const token = (await post(client, `/customers/${customer.id}/tokens`, { source: (await card(client)).id }))
    .token;
  return { customer, token };
}

describe("expand on every answer that presents a resource", () => {
  it.each(SHAPES)("POST and PUT /customers answer the expanded customer (%s)", async (shape) => {
    const env = await environment();
    const created = await send(env, "POST", shape, "/customers", ["project", "tokens"], {
      first_name: "Ada",
    });
    expect(created.status).toBe(200);
    expect(created.body.customer).toMatchObject({
      first_name: "Ada",
      project: { id: env.projectId, sandbox: true },
      tokens: [],
      subscriptions: null,
    });
    const id = created.body.customer.id;
    const updated = await send(env, "PUT", shape, `/customers/${id}`, ["project"], { last_name: "Lovelace" });
    expect(updated.status).toBe(200);
    expect(updated.body.customer).toMatchObject({ last_name: "Lovelace", project: { id: env.projectId } });
    // What was stored is the customer itself: a plain read shows no project.
    expect((await env.client.get(`/customers/${id}`)).body.customer).not.toHaveProperty("project");
  });

  it.each(SHAPES)("a customer expands its tokens, subscriptions and transactions (%s)", async (shape) => {
    const env = await environment();
    const { customer, token } = await customerWithToken(env.client, { first_name: "Ada" });
    await post(env.client, "/plans", {
      id: "monthly",
      name: "Monthly",
      amount: "5.00",
      currency: "EUR",
      interval: "1m",
      trial_period: "7d",
    });
    const subscription = (
      await post(env.client, "/subscriptions", {
        customer_id: customer.id,
        plan_id: "monthly",
        source: token.id,
      })
    ).subscription;
    const invoice = (
      await post(env.client, "/invoices", {
        name: "A",
        amount: "3.00",
        currency: "EUR",
        customer_id: customer.id,
      })
    ).invoice;
    const paid = (await post(env.client, `/invoices/${invoice.id}/authorize`, { source: token.id }))
      .transaction;

    const paths = ["tokens", "subscriptions", "transactions"];
    const { status, body } = await send(env, "GET", shape, `/customers/${customer.id}`, paths);
    expect(status).toBe(200);
    expect(body.customer.tokens).toEqual([
      { ...token, card: expect.objectContaining({ id: token.card_id }) },
    ]);
    expect(body.customer.subscriptions).toEqual([
      (await env.client.get(`/subscriptions/${subscription.id}`)).body.subscription,
    ]);
    expect(body.customer.transactions).toEqual([
      (await env.client.get(`/transactions/${paid.id}`)).body.transaction,
    ]);
  });

  it.each(SHAPES)(
    "POST and PUT /invoices expand customer, customer.tokens, token and project (%s)",
    async (shape) => {
      const env = await environment();
      const { customer, token } = await customerWithToken(env.client, {});
      const paths = ["customer", "customer.tokens", "token", "project"];
      const fields = {
        name: "Order",
        amount: "9.99",
        currency: "USD",
        customer_id: customer.id,
        token_id: token.id,
      };
      const created = await send(env, "POST", shape, "/invoices", paths, fields);
      expect(created.status).toBe(200);
      const tokenShown = { ...token, card: expect.objectContaining({ id: token.card_id }) };
      expect(created.body.invoice).toMatchObject({
        customer_id: customer.id,
        customer: { ...customer, default_token_id: token.id, tokens: [tokenShown] },
        token_id: token.id,
        token: tokenShown,
        project: { id: env.projectId },
      });
      // The expanded customer sits right after customer_id.
      const keys = Object.keys(created.body.invoice);
      expect(keys[keys.indexOf("customer_id") + 1]).toBe("customer");

      const updated = await send(env, "PUT", shape, `/invoices/${created.body.invoice.id}`, ["customer"], {
        name: "Order 2",
      });
      expect(updated.body.invoice).toMatchObject({
        name: "Order 2",
        customer: { id: customer.id, tokens: null },
      });
    },
  );

  it.each(SHAPES)("payments answer their transaction expanded, nested paths included (%s)", async (shape) => {
    const env = await environment();
    const { customer, token } = await customerWithToken(env.client, { first_name: "Ada" });
    const invoice = (
      await post(env.client, "/invoices", {
        name: "A",
        amount: "10.00",
        currency: "EUR",
        customer_id: customer.id,
      })
    ).invoice;
    const paths = ["invoice", "invoice.customer", "customer", "token", "card", "project"];
    const authorized = await send(env, "POST", shape, `/invoices/${invoice.id}/authorize`, paths, {
      source: token.id,
    });
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
    const transaction = authorized.body.transaction;
    expect(transaction).toMatchObject({
      invoice: { id: invoice.id, transaction_id: transaction.id, customer: { id: customer.id } },
      customer: { id: customer.id, default_token_id: token.id },
      token: { id: token.id, is_default: true },
      card: { id: token.card_id, last_4_digits: "4242" },
      project: { id: env.projectId },
    });
    expect(authorized.body.customer_action).toEqual({});

    const captured = await send(env, "POST", shape, `/invoices/${invoice.id}/capture`, ["invoice"]);
    expect(captured.body.transaction).toMatchObject({ status: "completed", invoice: { id: invoice.id } });
    const refunded = await send(env, "POST", shape, `/transactions/${transaction.id}/refunds`, ["card"], {
      amount: "1.00",
      reason: "customer_request",
    });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    expect(refunded.body.transaction.card).toMatchObject({ id: token.card_id });
    const listed = await send(env, "GET", shape, `/customers/${customer.id}/transactions`, [
      "invoice",
      "card",
    ]);
    expect(listed.body.transactions).toEqual([
      expect.objectContaining({ id: transaction.id, invoice: expect.objectContaining({ id: invoice.id }) }),
    ]);
  });

  it.each(SHAPES)("token and subscription answers expand their links (%s)", async (shape) => {
    const env = await environment();
    const customer = (await post(env.client, "/customers", { first_name: "Ada" })).customer;
    const source = (await card(env.client)).id;
    const token = await send(env, "POST", shape, `/customers/${customer.id}/tokens`, ["customer", "card"], {
      source,
    });
    expect(token.status).toBe(200);
    expect(token.body.token).toMatchObject({ customer: { id: customer.id }, card: { id: source } });
    expect(token.body.customer_action).toEqual({});
    const tokens = await send(env, "GET", shape, `/customers/${customer.id}/tokens`, ["customer"]);
    expect(tokens.body.tokens[0].customer).toMatchObject({
      id: customer.id,
      default_token_id: token.body.token.id,
    });

    await post(env.client, "/plans", {
      id: "gold",
      name: "Gold",
      amount: "5.00",
      currency: "EUR",
      interval: "1m",
      trial_period: "7d",
    });
    const paths = ["customer", "plan", "token", "token.card"];
    const subscription = await send(env, "POST", shape, "/subscriptions", paths, {
      customer_id: customer.id,
      plan_id: "gold",
      source: token.body.token.id,
    });
    expect(subscription.status, JSON.stringify(subscription.body)).toBe(200);
    expect(subscription.body.subscription).toMatchObject({
      customer: { id: customer.id },
      plan: { id: "gold", amount: "5.00" },
      token: { id: token.body.token.id, card: { id: source } },
    });
    const listed = await send(env, "GET", shape, `/customers/${customer.id}/subscriptions`, ["plan"]);
    expect(listed.body.subscriptions).toEqual([
      expect.objectContaining({ plan: expect.objectContaining({ id: "gold" }) }),
    ]);
    const canceled = await send(env, "DELETE", shape, `/subscriptions/${subscription.body.subscription.id}`, [
      "plan",
    ]);
    expect(canceled.body.subscription).toMatchObject({ canceled: true, plan: { id: "gold" } });
  });

  it("gives null for a link that is not set and for a transaction not made yet", async () => {
    const env = await environment();
    const invoice = (await post(env.client, "/invoices", { name: "A", amount: "1.00", currency: "EUR" }))
      .invoice;
    const { body } = await env.client.get(`/invoices/${invoice.id}/transactions?expand=invoice`);
    expect(body).toEqual({ success: true, transaction: null });
    const created = await env.client.post("/invoices?expand=customer,token,transaction", {
      name: "B",
      amount: "1.00",
      currency: "EUR",
    });
    expect(created.body.invoice).toMatchObject({ customer: null, token: null, transaction: null });
  });

  it("replays an Idempotency-Key's answer expanded, from the answer stored with the change", async () => {
    const env = await environment();
    const key = `key-${crypto.randomUUID()}`;
    const first = await env.client.post(
      "/customers?expand=project",
      { first_name: "Ada" },
      { idempotencyKey: key },
    );
    const again = await env.client.post(
      "/customers?expand=project",
      { first_name: "Ada" },
      { idempotencyKey: key },
    );
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(again.body.customer.project).toMatchObject({ id: env.projectId });
  });

  it("refuses an unknown path with a 400 naming expand before any work: nothing is created", async () => {
    const env = await environment();
    const before = (await env.client.get("/customers?limit=1")).body.total_count;
    for (const path of ["secrets", "project.secrets", "tokens.customer.tokens", "customer"]) {
      const { status, body } = await env.client.post("/customers", { first_name: "Ada", expand: [path] });
      expect(status).toBe(400);
      expect(body).toMatchObject({ error_type: "request.validation.invalid-expand" });
      expect(body.invalid_fields).toEqual([expect.objectContaining({ name: "expand" })]);
    }
    expect((await env.client.get("/customers?limit=1")).body.total_count).toBe(before);
  });

  it("expands a page of transactions with one batch read per level, whatever the page's length", async () => {
    const env = await environment();
    const { customer, token } = await customerWithToken(env.client, {});
    const source = token.id;
    for (let i = 0; i < 4; i++) {
      const invoice = (
        await post(env.client, "/invoices", {
          name: `n${i}`,
          amount: "1.00",
          currency: "EUR",
          customer_id: customer.id,
        })
      ).invoice;
      await post(env.client, `/invoices/${invoice.id}/authorize`, { source });
    }
    const calls = dynamoCallCount();
    const { body } = await env.client.get("/transactions?expand=invoice,customer,token,card&limit=100");
    expect(body.transactions).toHaveLength(4);
    // The count (a BatchGet of its shards, and a query of the layout before them); the page (a query
    // of each of the 16 listing shards of transactions and of the one partition before them, sent
    // together); invoices, customer and token in one BatchGet; the card in another.
    expect(dynamoCallCount() - calls).toBe(2 + 17 + 2);
    for (const transaction of body.transactions) {
      expect(transaction).toMatchObject({
        invoice: { id: transaction.invoice_id },
        customer: { id: customer.id },
        token: { id: source },
        card: { id: transaction.card_id },
      });
    }

    const more = dynamoCallCount();
    const customers = await env.client.get("/customers?expand=tokens,transactions.invoice");
    expect(customers.body.customers[0].transactions.map((t: Body) => (t.invoice as Body).id)).toHaveLength(4);
    // Count and page (2 calls and 9: the shards of customers and the partition before them, as
    // above); the customer's tokens and its transactions' keys (one query each), the cards of its
    // tokens and its transactions (one BatchGet each), then their invoices (one BatchGet).
    expect(dynamoCallCount() - more).toBe(2 + 9 + 5);
  });
});

describe("expandable fields", () => {
  it("are the ones the issue names, and nested paths chain them", () => {
    expect(
      Object.fromEntries(Object.entries(EXPANDABLE).map(([type, fields]) => [type, Object.keys(fields)])),
    ).toEqual({
      customer: ["project", "tokens", "subscriptions", "transactions"],
      invoice: ["project", "customer", "transaction", "token"],
      transaction: ["project", "invoice", "customer", "token", "card"],
      token: ["customer", "card"],
      subscription: ["customer", "plan", "token"],
      plan: [],
      card: [],
      project: [],
    });
    expect(expandablePaths("invoice")).toEqual(
      expect.arrayContaining(["customer", "customer.tokens", "customer.transactions", "transaction.card"]),
    );
    expect(expandablePaths("invoice")).not.toContain("customer.tokens.card");
  });

  it("are refused to a request made with the public key", () => {
    const request = {
      query: { expand: "customer" },
      body: {},
      caller: { credential: "public-key" },
    } as unknown as ApiRequest;
    expect(() => expandAnswer("invoice").prepare(request)).toThrowError(ApiError);
    const privateRequest = { ...request, caller: { credential: "private-key" } } as unknown as ApiRequest;
    expect(expandAnswer("invoice").prepare(privateRequest)).toBeTypeOf("function");
  });
});
