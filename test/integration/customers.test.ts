import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Customers test");
const { sandbox, live } = local;

const totalCount = async (client: Client) => (await client.get("/customers?limit=1")).body.total_count;

describe("POST /customers", () => {
  it("creates an empty customer with every field present", async () => {
    const { status, body } = await sandbox.post("/customers", {});
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.customer).toMatchObject({
      id: expect.stringMatching(/^cust_[0-9A-Z]{26}$/),
      project_id: local.project.sandbox.project_id,
      sandbox: true,
      email: null,
      first_name: null,
      currency: null,
      balance: "0",
      metadata: {},
      tokens: null,
      subscriptions: null,
      transactions: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
  });

  it("accepts the same customer in form encoding and in JSON", async () => {
    const fields = {
      first_name: "Ada",
      last_name: "Lovelace",
      email: "ada@example.com",
      currency: "eur",
      phone_number: "+441234567890",
      country_code: "gb",
      metadata: { plan: "gold", "order.ref": "A-1" },
    };
    const json = await sandbox.post("/customers", fields);
    const form = await sandbox.post(
      "/customers",
      "first_name=Ada&last_name=Lovelace&email=ada%40example.com&currency=eur&phone_number=%2B441234567890" +
        "&country_code=gb&metadata[plan]=gold&metadata[order.ref]=A-1",
      { form: true },
    );
    for (const { status, body } of [json, form]) {
      expect(status).toBe(200);
      expect(body.customer).toMatchObject({
        first_name: "Ada",
        last_name: "Lovelace",
        email: "ada@example.com",
        currency: "EUR",
        phone_number: "00441234567890",
        country_code: "GB",
        metadata: { plan: "gold", "order.ref": "A-1" },
      });
    }
  });

  it("treats null fields from client libraries as absent", async () => {
    const { status, body } = await sandbox.post("/customers", {
      first_name: "Grace",
      email: null,
      expand: null,
    });
    expect(status).toBe(200);
    expect(body.customer).toMatchObject({ first_name: "Grace", email: null });
  });

  it.each([
    [
      "metadata with a key over 40 characters",
      { metadata: { ["k".repeat(41)]: "v" } },
      `metadata.${"k".repeat(41)}`,
    ],
    ["metadata with a value over 500 characters", { metadata: { note: "v".repeat(501) } }, "metadata.note"],
    [
      "metadata with 51 pairs",
      { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
      "metadata",
    ],
    ["a currency that is not ISO 4217", { currency: "ABC" }, "currency"],
    ["an invalid email", { email: "not-an-email" }, "email"],
    ["an unknown country", { country_code: "XX" }, "country_code"],
    ["a phone number over 17 characters", { phone_number: "+1234567890123456" }, "phone_number"],
  ])("refuses %s with a 400 naming the field, and writes nothing", async (_, fields, name) => {
    const before = await totalCount(sandbox);
    const { status, body } = await sandbox.post("/customers", fields);
    expect(status).toBe(400);
    expect(body.success).toBe(false);
    expect(body.error_type).toMatch(/^request\.validation\./);
    expect(body.invalid_fields).toEqual([expect.objectContaining({ name })]);
    expect(await totalCount(sandbox)).toBe(before);
  });

  it("counts every one of many concurrent creations exactly once", async () => {
    const before = await totalCount(sandbox);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => sandbox.post("/customers", { first_name: `c${i}` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
    expect(await totalCount(sandbox)).toBe(before + 30);
  });

  it("answers a malformed JSON body with a 400 and writes nothing", async () => {
    const before = await totalCount(sandbox);
    const { status, body } = await sandbox.post("/customers", '{"first_name": "Ada"', {
      contentType: "application/json",
    });
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, error_type: "request.validation.malformed-body" });
    expect(await totalCount(sandbox)).toBe(before);
  });
});

describe("GET, PUT and DELETE /customers/{id}", () => {
  it("returns a customer, with its project and tokens when expanded", async () => {
    const created = (await sandbox.post("/customers", { first_name: "Alan" })).body.customer;
    const plain = await sandbox.get(`/customers/${created.id}`);
    expect(plain.body.customer).toEqual(created);

    const expanded = await sandbox.get(`/customers/${created.id}?expand[]=tokens&expand[]=project`);
    expect(expanded.body.customer).toMatchObject({
      id: created.id,
      tokens: [],
      project: { id: local.project.sandbox.project_id, sandbox: true },
    });
  });

  it("answers an unknown id with 404 resource.customer.not-found", async () => {
    const { status, body } = await sandbox.get("/customers/cust_01JZZZZZZZZZZZZZZZZZZZZZZZ");
    expect(status).toBe(404);
    expect(body).toMatchObject({ success: false, error_type: "resource.customer.not-found" });
  });

  it("updates only the fields sent, clears a field sent empty, and keeps currency immutable", async () => {
    const created = (
      await sandbox.post("/customers", { first_name: "Alan", last_name: "Turing", currency: "GBP" })
    ).body.customer;
    const updated = await sandbox.put(`/customers/${created.id}`, { first_name: "A.", last_name: "" });
    expect(updated.status).toBe(200);
    expect(updated.body.customer).toMatchObject({ first_name: "A.", last_name: null, currency: "GBP" });

    expect((await sandbox.put(`/customers/${created.id}`, { currency: "GBP" })).status).toBe(200);
    const changed = await sandbox.put(`/customers/${created.id}`, { currency: "USD" });
    expect(changed.status).toBe(400);
    expect(changed.body.invalid_fields).toEqual([expect.objectContaining({ name: "currency" })]);
    expect((await sandbox.get(`/customers/${created.id}`)).body.customer.currency).toBe("GBP");
  });

  it("sets a currency once on a customer that has none", async () => {
    const created = (await sandbox.post("/customers", {})).body.customer;
    expect((await sandbox.put(`/customers/${created.id}`, { currency: "JPY" })).body.customer.currency).toBe(
      "JPY",
    );
    expect((await sandbox.put(`/customers/${created.id}`, { currency: "EUR" })).status).toBe(400);
  });

  it("deletes a customer once, and counts it out", async () => {
    const created = (await sandbox.post("/customers", {})).body.customer;
    const before = await totalCount(sandbox);
    const deleted = await sandbox.del(`/customers/${created.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await sandbox.get(`/customers/${created.id}`)).status).toBe(404);
    expect((await sandbox.del(`/customers/${created.id}`)).status).toBe(404);
    expect(await totalCount(sandbox)).toBe(before - 1);
  });
});

describe("isolation", () => {
  it("keeps sandbox and live apart, and one project away from another's customers", async () => {
    const other = api(local.url, (await createProject("Other")).sandbox);
    const liveCustomer = (await live.post("/customers", { first_name: "Live" })).body.customer;
    expect(liveCustomer.sandbox).toBe(false);

    expect((await sandbox.get(`/customers/${liveCustomer.id}`)).status).toBe(404);
    expect((await other.get(`/customers/${liveCustomer.id}`)).status).toBe(404);
    expect((await sandbox.put(`/customers/${liveCustomer.id}`, { first_name: "x" })).status).toBe(404);
    expect((await other.del(`/customers/${liveCustomer.id}`)).status).toBe(404);
    const sandboxIds = (await sandbox.get("/customers?limit=100")).body.customers.map(
      (c: { id: string }) => c.id,
    );
    expect(sandboxIds).not.toContain(liveCustomer.id);
    expect((await live.get(`/customers/${liveCustomer.id}`)).body.customer.first_name).toBe("Live");
  });

  it("refuses a wrong key, an unknown project and a live key on the sandbox id", async () => {
    const wrongKey = api(local.url, {
      project_id: local.project.sandbox.project_id,
      private_key: "key_sandbox_wrong",
    });
    const swapped = api(local.url, {
      project_id: local.project.sandbox.project_id,
      private_key: local.project.live.private_key,
    });
    const unknown = api(local.url, {
      project_id: "proj_01JZZZZZZZZZZZZZZZZZZZZZZZ",
      private_key: "key_live_x",
    });
    for (const client of [wrongKey, swapped]) {
      const { status, body } = await client.get("/customers");
      expect(status).toBe(401);
      expect(body).toMatchObject({ success: false, error_type: "request.authentication.invalid" });
    }
    expect((await unknown.get("/customers")).body.error_type).toBe(
      "request.authentication.invalid-project-id",
    );
    const anonymous = await fetch(`${local.url}/customers`);
    expect(anonymous.status).toBe(401);
  });
});
