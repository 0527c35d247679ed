import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { basicAuthorization, type RawRequest, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 13: what the official server libraries send for the routes of the contract
 * (`../shared/reference/client-compatibility.md`), byte for byte where the reference records it, and
 * the tolerance they need: JSON bodies with `null` for every unset field, query strings with empty,
 * bare and `null` parameters, `Accept: *\/*`, empty `Idempotency-Key` and `Disable-Logging` headers,
 * bodies on GET and DELETE, read-only fields echoed on PUT.
 */
const local = useInProcessApi("Client libraries test");

type Body = Record<string, unknown>;

async function environment() {
  const project = await createProject("Client libraries");
  const { project_id: projectId, private_key: privateKey } = project.sandbox;
  const client = api(local.url, project.sandbox);
  /** A request as a library sends it: its headers, its query string, its body text. */
  const raw = async (request: Omit<RawRequest, "headers"> & { headers?: Record<string, string> }) => {
    const answer = await sendRaw(local.url, {
      ...request,
      headers: {
        authorization: basicAuthorization(projectId, privateKey),
        "user-agent": "client-library/1.0",
        "api-version": "1.4.0.0",
        ...request.headers,
      },
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
    return { status: answer.status, body: JSON.parse(answer.text) as any };
  };
  return { client, raw, projectId };
}

const json = (body: Body) => ({
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(body),
});

async function paidCustomer(client: Client) {
  const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
  const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .body.card;
  const token = (await client.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
  const invoice = (
    await client.post("/invoices", {
      name: "Order",
      amount: "4.20",
      currency: "EUR",
      customer_id: customer.id,
    })
  ).body.invoice;
  const transaction = (await client.post(`/invoices/${invoice.id}/authorize`, { source: token.id })).body
    .transaction;
  return { customer, token, invoice, transaction };
}

describe("a library that sends JSON with null for every unset field", () => {
  it("creates a customer with expand in the body, its other fields null", async () => {
    const { raw, projectId } = await environment();
    const { status, body } = await raw({
      method: "POST",
      target: "/customers",
      ...json({
        first_name: "Ada",
        last_name: null,
        email: null,
        currency: null,
        metadata: null,
        balance: null,
        is_business: null,
        expand: ["project"],
      }),
    });
    expect(status).toBe(200);
    expect(body.customer).toMatchObject({ first_name: "Ada", last_name: null, project: { id: projectId } });
  });

  it("authorizes with the keys it sends as null and expands the transaction's invoice", async () => {
    const { client, raw } = await environment();
    const invoice = (await client.post("/invoices", { name: "A", amount: "3.00", currency: "EUR" })).body
      .invoice;
    const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
      .body.card;
    const { status, body } = await raw({
      method: "POST",
      target: `/invoices/${invoice.id}/authorize`,
      ...json({
        source: card.id,
        synchronous: null,
        retry_drop_liability_shift: null,
        capture_amount: null,
        enable_three_d_s_2: null,
        allow_fallback_to_sale: null,
        override_mac_blocking: null,
        external_three_d_s: null,
        save_source: null,
        device: null,
        metadata: null,
        incremental: null,
        expand: ["invoice"],
      }),
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.transaction).toMatchObject({ status: "authorized", invoice: { id: invoice.id } });
    expect(body.customer_action).toEqual({});
  });
});

describe("a library that adds the listing parameters to every request", () => {
  const LISTING = "filter=&limit=0&end_before=&start_after=";

  it("creates, updates and lists with them, in the query and in the JSON body", async () => {
    const { raw, projectId } = await environment();
    const created = await raw({
      method: "POST",
      target: `/customers?${LISTING}`,
      ...json({ first_name: "Ada", expand: null, limit: 0 }),
    });
    expect(created.status).toBe(200);
    expect(created.body.customer).not.toHaveProperty("project");
    const id = created.body.customer.id;
    const updated = await raw({
      method: "PUT",
      target: `/customers/${id}?${LISTING}`,
      ...json({ last_name: "Lovelace", expand: ["project"], limit: 0 }),
    });
    expect(updated.body.customer).toMatchObject({ last_name: "Lovelace", project: { id: projectId } });
    const listed = await raw({ method: "GET", target: `/customers?${LISTING}&expand=project` });
    expect(listed.body).toMatchObject({
      count: 1,
      limit: 10,
      customers: [{ id, project: { id: projectId } }],
    });
  });

  it("lists a customer's transactions and subscriptions with them", async () => {
    const { client, raw } = await environment();
    const { customer, transaction } = await paidCustomer(client);
    const transactions = await raw({
      method: "GET",
      target: `/customers/${customer.id}/transactions?&${LISTING}&expand[]=invoice`,
    });
    expect(transactions.status).toBe(200);
    expect(transactions.body.transactions).toEqual([
      expect.objectContaining({
        id: transaction.id,
        invoice: expect.objectContaining({ id: transaction.invoice_id }),
      }),
    ]);
    const subscriptions = await raw({
      method: "GET",
      target: `/customers/${customer.id}/subscriptions?&${LISTING}`,
    });
    expect(subscriptions.body).toMatchObject({ success: true, subscriptions: [], total_count: 0 });
  });
});

describe("a library that sends Accept: */*, empty Idempotency-Key headers and its language's literals", () => {
  it("is answered in JSON, and an empty Idempotency-Key is no key: two creates make two customers", async () => {
    const { raw } = await environment();
    const send = () =>
      raw({
        method: "POST",
        target: "/customers",
        headers: {
          accept: "*/*",
          "content-type": "application/json",
          "idempotency-key": "",
          "disable-logging": "",
        },
        body: JSON.stringify({ first_name: "Ada" }),
      });
    const [first, second] = [await send(), await send()];
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.customer.id).not.toBe(second.body.customer.id);
  });

  it("cancels a subscription with None and True in the query string", async () => {
    const { client, raw } = await environment();
    const { customer, token } = await paidCustomer(client);
    await client.post("/plans", {
      id: "m",
      name: "M",
      amount: "1.00",
      currency: "EUR",
      interval: "1m",
      trial_period: "3d",
    });
    const subscription = (
      await client.post("/subscriptions", { customer_id: customer.id, plan_id: "m", source: token.id })
    ).body.subscription;
    const { status, body } = await raw({
      method: "DELETE",
      target: `/subscriptions/${subscription.id}?cancel_at=None&cancellation_reason=None&cancel_at_end=True&expand=customer`,
      headers: { accept: "*/*", "disable-logging": "true" },
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.subscription).toMatchObject({ pending_cancellation: true, customer: { id: customer.id } });
  });
});

describe("a library that sends GET and DELETE parameters oddly", () => {
  it("reads an empty trailing ?, a bare key and the literal null as not given", async () => {
    const { client, raw } = await environment();
    const { customer, invoice } = await paidCustomer(client);
    for (const target of [
      `/customers/${customer.id}?`,
      `/customers/${customer.id}?expand`,
      `/customers/${customer.id}?expand=null`,
      `/customers/${customer.id}?expand[]=null&expand[]=`,
      "/customers?limit=null&order=null&start_after=null&end_before",
      "/gateway-configurations?expand_merchant_accounts=null&with_disabled&filter=null",
    ]) {
      const { status, body } = await raw({ method: "GET", target, headers: { accept: "*/*" } });
      expect(status, `${target}: ${JSON.stringify(body)}`).toBe(200);
    }
    const plain = await raw({ method: "GET", target: `/invoices/${invoice.id}?expand=null` });
    expect(plain.body.invoice).not.toHaveProperty("customer");
  });

  it("sends expand in a JSON body on GET and DELETE", async () => {
    const { client, raw } = await environment();
    const { customer, invoice } = await paidCustomer(client);
    const got = await raw({
      method: "GET",
      target: `/invoices/${invoice.id}`,
      ...json({ expand: ["customer"] }),
    });
    expect(got.body.invoice.customer).toMatchObject({ id: customer.id });
    const unpaid = (await client.post("/invoices", { name: "B", amount: "1.00", currency: "EUR" })).body
      .invoice;
    const deleted = await raw({
      method: "DELETE",
      target: `/invoices/${unpaid.id}`,
      ...json({ expand: null }),
    });
    expect(deleted).toEqual({ status: 200, body: { success: true } });
  });
});

describe("echoed read-only fields on PUT", () => {
  it("accepts a customer sent back as it was read, and ignores its read-only fields", async () => {
    const { client, raw } = await environment();
    const customer = (await client.post("/customers", { first_name: "Ada", currency: "EUR" })).body.customer;
    const { status, body } = await raw({
      method: "PUT",
      target: `/customers/${customer.id}`,
      ...json({ ...customer, first_name: "Grace", balance: "12.00", is_business: true }),
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.customer).toMatchObject({
      first_name: "Grace",
      balance: "0",
      is_business: true,
      currency: "EUR",
    });
  });

  it("accepts an invoice sent back as it was read, device and incremental included", async () => {
    const { client, raw } = await environment();
    const invoice = (
      await client.post("/invoices", { name: "A", amount: "3.00", currency: "EUR", details: [] })
    ).body.invoice;
    const { status, body } = await raw({
      method: "PUT",
      target: `/invoices/${invoice.id}`,
      ...json({
        ...invoice,
        name: "B",
        incremental: true,
        require_backend_capture: true,
        device: { channel: "ios" },
      }),
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.invoice).toMatchObject({
      name: "B",
      incremental: false,
      require_backend_capture: false,
      device: { channel: "ios" },
    });
  });

  it("accepts a token sent back as it was read", async () => {
    const { client, raw } = await environment();
    const { customer, token } = await paidCustomer(client);
    const { status, body } = await raw({
      method: "PUT",
      target: `/customers/${customer.id}/tokens/${token.id}`,
      ...json({ ...token, source: null, description: "main card", is_default: false, is_chargeable: false }),
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.token).toMatchObject({ description: "main card", is_default: true, is_chargeable: true });
  });
});
