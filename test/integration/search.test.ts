/**
 * Search (issue 24's payments search, server-side): `GET /search` finds an environment's payments by
 * the card's last four digits, its customers by email (and their payments), and either by id, from
 * search entries written in the same write as what they index.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import type { RoundTrips } from "../../shared/db/round-trips.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

const metered: { last?: RoundTrips } = {};
const local = useInProcessApi("Search test", {
  roundTrips: (_route, trips) => {
    metered.last = { ...trips };
  },
  meteringRoundTrips: () => true,
});

const VISA = "4242424242424242";
/** Another card whose number also ends in 4242. */
const OTHER_VISA = "4000000000024242";
const MASTERCARD = "5555555555554444";
const DECLINED = "4000000000000002";
/** Test cards that pass 3-D Secure without a challenge. */
const FRICTIONLESS = "4000000000003055";
const OTHER_FRICTIONLESS = "4000000000003063";

interface Found {
  query: string;
  kind: string;
  transactions: { id: string; card_id: string; invoice_id: string; customer_id: string | null }[];
  customers: { id: string; email: string | null }[];
}

async function card(client: Client, number: string): Promise<string> {
  const { status, body } = await client.post("/cards", { number, exp_month: 12, exp_year: 2099 });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.card.id;
}

/** An invoice paid (or declined) with `cardId`; its transaction's id. */
async function pay(client: Client, cardId: string, fields: Record<string, unknown> = {}): Promise<string> {
  const created = await client.post("/invoices", {
    name: "Order",
    amount: "12.00",
    currency: "EUR",
    ...fields,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const paid = await client.post(`/invoices/${created.body.invoice.id}/authorize`, { source: cardId });
  expect([200, 402, 410], JSON.stringify(paid.body)).toContain(paid.status);
  const invoice = (await client.get(`/invoices/${created.body.invoice.id}`)).body.invoice;
  expect(invoice.transaction_id).toMatch(/^tr_/);
  return invoice.transaction_id;
}

async function search(client: Client, query: string, limit?: number): Promise<Found> {
  const params = new URLSearchParams({ query, ...(limit ? { limit: String(limit) } : {}) });
  const { status, body } = await client.get(`/search?${params}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

const ids = (found: { id: string }[]) => found.map((item) => item.id);
const newestFirst = (list: string[]) => [...list].sort().reverse();

describe("GET /search", () => {
  it("finds the transactions of the cards ending in four digits, newest first, each once", async () => {
    const client = api(local.url, (await createProject("Search by card")).sandbox);
    const [visa, otherVisa, mastercard, declined] = (await Promise.all(
      [VISA, OTHER_VISA, MASTERCARD, DECLINED].map((number) => card(client, number)),
    )) as [string, string, string, string];
    const first = await pay(client, visa);
    const second = await pay(client, otherVisa);
    const third = await pay(client, visa);
    const onMastercard = await pay(client, mastercard);
    const refused = await pay(client, declined);

    const found = await search(client, "4242");
    expect(found.kind).toBe("card_last_4");
    expect(ids(found.transactions)).toEqual(newestFirst([first, second, third]));
    expect(new Set(found.transactions.map((transaction) => transaction.card_id))).toEqual(
      new Set([visa, otherVisa]),
    );
    expect(found.customers).toEqual([]);
    expect(ids((await search(client, "4444")).transactions)).toEqual([onMastercard]);
    // A declined payment is found too: support looks for those.
    expect(ids((await search(client, "0002")).transactions)).toEqual([refused]);
    expect((await search(client, "9999")).transactions).toEqual([]);
    // The answer's transactions are the API's own shape.
    expect(found.transactions[0]).toEqual((await client.get(`/transactions/${third}`)).body.transaction);

    // A replayed authorization (its Idempotency-Key) and an authorization asked again write no
    // second entry: the entry's key is the card's digits and the transaction's id.
    const invoice = (await client.post("/invoices", { name: "Again", amount: "3.00", currency: "EUR" })).body
      .invoice;
    const key = `search-replay-${Date.now()}`;
    const once = await client.post(
      `/invoices/${invoice.id}/authorize`,
      { source: visa },
      { idempotencyKey: key },
    );
    const replayed = await client.post(
      `/invoices/${invoice.id}/authorize`,
      { source: visa },
      { idempotencyKey: key },
    );
    expect(replayed.body).toEqual(once.body);
    expect((await client.post(`/invoices/${invoice.id}/authorize`, { source: visa })).status).toBe(200);
    const scope = once.body.transaction.project_id;
    const { Items = [] } = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": keys.searchCardLast4Partition(scope, "4242") },
      }),
    );
    expect(Items.map((item) => item.sk).sort()).toEqual(
      [first, second, third, once.body.transaction.id].sort(),
    );
  });

  it("follows a transaction to the card it is finally paid with, after 3-D Secure alone with others", async () => {
    const client = api(local.url, (await createProject("Search card change")).sandbox);
    const [first, second, paying] = (await Promise.all(
      [FRICTIONLESS, OTHER_FRICTIONLESS, VISA].map((number) => card(client, number)),
    )) as [string, string, string];
    const invoice = (await client.post("/invoices", { name: "3DS first", amount: "8.00", currency: "EUR" }))
      .body.invoice;
    const authenticated = await client.post(`/invoices/${invoice.id}/three-d-s`, { source: first });
    expect(authenticated.status, JSON.stringify(authenticated.body)).toBe(200);
    const transactionId = authenticated.body.transaction.id;
    expect(ids((await search(client, "3055")).transactions)).toEqual([transactionId]);

    // Authenticated again with another card (the authentication starts over), then paid with a third.
    expect((await client.post(`/invoices/${invoice.id}/three-d-s`, { source: second })).status).toBe(200);
    expect((await search(client, "3055")).transactions).toEqual([]);
    expect(ids((await search(client, "3063")).transactions)).toEqual([transactionId]);
    const paid = await client.post(`/invoices/${invoice.id}/authorize`, { source: paying });
    expect(paid.body.transaction, JSON.stringify(paid.body)).toMatchObject({
      id: transactionId,
      card_id: paying,
    });
    expect((await search(client, "3063")).transactions).toEqual([]);
    expect((await search(client, "4242")).transactions).toEqual([paid.body.transaction]);
  });

  it("answers each kind of query in one to three DynamoDB round trips", async () => {
    const client = api(local.url, (await createProject("Search round trips")).sandbox);
    const visa = await card(client, VISA);
    const customer = (await client.post("/customers", { email: "trips@example.com" })).body.customer;
    const transactionId = await pay(client, visa, { customer_id: customer.id });
    const invoiceId = (await client.get(`/transactions/${transactionId}`)).body.transaction.invoice_id;
    const expected: [string, number][] = [
      [transactionId, 1],
      [invoiceId, 1],
      [customer.id, 1],
      ["4242", 2],
      ["trips@example.com", 3],
    ];
    for (const [query, sequential] of expected) {
      metered.last = undefined;
      const started = performance.now();
      const found = await search(client, query);
      const took = performance.now() - started;
      expect(found.transactions.length + found.customers.length, query).toBeGreaterThan(0);
      const trips = metered.last as RoundTrips | undefined;
      expect(trips, query).toMatchObject({ sequential });
      console.info(`GET /search (${found.kind}): ${trips?.sequential} round trips, ${took.toFixed(1)} ms`);
    }
  });

  it("answers at most `limit` transactions, the newest, 20 unless asked", async () => {
    const client = api(local.url, (await createProject("Search limit")).sandbox);
    const visa = await card(client, VISA);
    const made: string[] = [];
    for (let index = 0; index < 22; index++) made.push(await pay(client, visa));
    const newest = newestFirst(made);
    expect(ids((await search(client, "4242")).transactions)).toEqual(newest.slice(0, 20));
    expect(ids((await search(client, "4242", 3)).transactions)).toEqual(newest.slice(0, 3));
    expect(ids((await search(client, "4242", 100)).transactions)).toEqual(newest);
  });

  it("finds the customers of an email, whatever its case and spaces, and their transactions; an old email no longer finds a customer", async () => {
    const client = api(local.url, (await createProject("Search by email")).sandbox);
    const visa = await card(client, VISA);
    const ada = (await client.post("/customers", { email: "Ada.Lovelace@Example.com", first_name: "Ada" }))
      .body.customer;
    const twin = (await client.post("/customers", { email: "ada.lovelace@example.com" })).body.customer;
    const someoneElse = (await client.post("/customers", { email: "grace@example.com" })).body.customer;
    const adasPayment = await pay(client, visa, { customer_id: ada.id });
    const twinsPayment = await pay(client, visa, { customer_id: twin.id });
    await pay(client, visa, { customer_id: someoneElse.id });

    const found = await search(client, "  ADA.lovelace@EXAMPLE.com ");
    expect(found).toMatchObject({ query: "ADA.lovelace@EXAMPLE.com", kind: "email" });
    expect(ids(found.customers)).toEqual(newestFirst([ada.id, twin.id]));
    expect(found.customers.find((customer) => customer.id === ada.id)).toEqual(
      (await client.get(`/customers/${ada.id}`)).body.customer,
    );
    expect(ids(found.transactions)).toEqual(newestFirst([adasPayment, twinsPayment]));
    expect(ids((await search(client, "ada.lovelace@example.com", 1)).transactions)).toEqual([
      newestFirst([adasPayment, twinsPayment])[0],
    ]);

    // Ada's email changes: the old one finds only her twin, the new one finds her; a change of
    // case alone keeps her found.
    expect((await client.put(`/customers/${ada.id}`, { email: "ada@analytical.example" })).status).toBe(200);
    expect(ids((await search(client, "ada.lovelace@example.com")).customers)).toEqual([twin.id]);
    const moved = await search(client, "ada@analytical.example");
    expect(ids(moved.customers)).toEqual([ada.id]);
    expect(ids(moved.transactions)).toEqual([adasPayment]);
    expect((await client.put(`/customers/${ada.id}`, { email: "ADA@analytical.example" })).status).toBe(200);
    expect(ids((await search(client, "ada@analytical.example")).customers)).toEqual([ada.id]);
    // Deleted: found no more.
    expect((await client.del(`/customers/${ada.id}`)).status).toBe(200);
    expect((await search(client, "ada@analytical.example")).customers).toEqual([]);
    expect((await client.del(`/customers/${twin.id}`)).status).toBe(200);
    expect(await search(client, "ada.lovelace@example.com")).toMatchObject({
      customers: [],
      transactions: [],
    });
    expect(ids((await search(client, "grace@example.com")).customers)).toEqual([someoneElse.id]);
  });

  it("finds a transaction, an invoice's transaction and a customer by id, or nothing", async () => {
    const client = api(local.url, (await createProject("Search by id")).sandbox);
    const visa = await card(client, VISA);
    const customer = (await client.post("/customers", { email: "id@example.com" })).body.customer;
    const transactionId = await pay(client, visa, { customer_id: customer.id });
    const invoiceId = (await client.get(`/transactions/${transactionId}`)).body.transaction.invoice_id;
    const unpaid = (await client.post("/invoices", { name: "Unpaid", amount: "1.00", currency: "EUR" })).body
      .invoice;

    expect(await search(client, transactionId)).toMatchObject({ kind: "transaction_id", customers: [] });
    expect(ids((await search(client, transactionId)).transactions)).toEqual([transactionId]);
    const byInvoice = await search(client, invoiceId);
    expect(byInvoice.kind).toBe("invoice_id");
    expect(ids(byInvoice.transactions)).toEqual([transactionId]);
    expect((await search(client, unpaid.id)).transactions).toEqual([]);
    const byCustomer = await search(client, customer.id);
    expect(byCustomer).toMatchObject({ kind: "customer_id", transactions: [] });
    expect(ids(byCustomer.customers)).toEqual([customer.id]);
    expect(await search(client, "tr_01ARZ3NDEKTSV4RRFFQ69G5FAV")).toMatchObject({
      transactions: [],
      customers: [],
    });
  });

  it("never finds another project's or environment's payments and customers", async () => {
    const ours = api(local.url, (await createProject("Search ours")).sandbox);
    const theirsProject = await createProject("Search theirs");
    const theirs = api(local.url, theirsProject.sandbox);
    const ourCard = await card(ours, VISA);
    const customer = (await ours.post("/customers", { email: "shared@example.com" })).body.customer;
    const ourPayment = await pay(ours, ourCard, { customer_id: customer.id });
    const invoiceId = (await ours.get(`/transactions/${ourPayment}`)).body.transaction.invoice_id;

    for (const query of ["4242", "shared@example.com", ourPayment, invoiceId, customer.id]) {
      expect(await search(theirs, query), query).toMatchObject({ transactions: [], customers: [] });
    }
    // Their own payment with a card of the same digits is theirs alone.
    const theirPayment = await pay(theirs, await card(theirs, VISA));
    expect(ids((await search(theirs, "4242")).transactions)).toEqual([theirPayment]);
    expect(ids((await search(ours, "4242")).transactions)).toEqual([ourPayment]);
    // The live environment of the same project sees none of its sandbox.
    const live = api(local.url, theirsProject.live);
    expect(await search(live, "4242")).toMatchObject({ transactions: [], customers: [] });
  });

  it("refuses a query it cannot search, and a bad limit, naming the field", async () => {
    const client = local.sandbox;
    for (const target of [
      "/search",
      "/search?query=",
      "/search?query=%20%20",
      "/search?query=ada",
      "/search?query=12345",
      "/search?query=424",
      "/search?query=cust_nope",
      `/search?query=${"a".repeat(300)}%40example.com`,
    ]) {
      const { status, body } = await client.get(target);
      expect(status, target).toBe(400);
      expect(body.success).toBe(false);
      expect(body.invalid_fields?.[0]?.name ?? body.error_type, target).toBe("query");
      expect(body.message, target).toMatch(/card|email/);
    }
    for (const limit of ["0", "101", "x", "2.5", "-1"]) {
      const { status, body } = await client.get(`/search?query=4242&limit=${limit}`);
      expect(status, limit).toBe(400);
      expect(body.invalid_fields?.[0]?.name, limit).toBe("limit");
    }
    expect((await api(local.url).get("/search?query=4242")).status).toBe(401);
  });
});
