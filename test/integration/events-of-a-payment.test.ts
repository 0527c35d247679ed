/**
 * The events of one payment, server-side (issue 24): `GET /events?transaction_id=` or `?invoice_id=`
 * lists the events about that transaction or invoice, newest first and paged like every list, from
 * the small items each event writes in its own transaction under what it is about.
 */
import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Events of a payment test");

interface Listed {
  events: { id: string; name: string; data: Record<string, { id?: string } | null> }[];
  count: number;
  has_more: boolean;
  total_count: number;
}

async function card(client: Client): Promise<string> {
  const { status, body } = await client.post("/cards", {
    number: "4242424242424242",
    exp_month: 12,
    exp_year: 2099,
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.card.id;
}

/** An invoice authorized, captured and partly refunded: its id and its transaction's. */
async function payment(client: Client): Promise<{ invoice: string; transaction: string }> {
  const created = await client.post("/invoices", { name: "Order", amount: "12.00", currency: "EUR" });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const invoice = created.body.invoice.id as string;
  const authorized = await client.post(`/invoices/${invoice}/authorize`, { source: await card(client) });
  expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
  const captured = await client.post(`/invoices/${invoice}/capture`, {});
  expect(captured.status, JSON.stringify(captured.body)).toBe(200);
  const refunded = await client.post(`/invoices/${invoice}/refunds`, { amount: "5.00" });
  expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
  return { invoice, transaction: authorized.body.transaction.id };
}

async function list(client: Client, query: string): Promise<Listed> {
  const { status, body } = await client.get(`/events?${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

const ids = (listed: Listed) => listed.events.map((event) => event.id);

describe("GET /events?transaction_id= and ?invoice_id=", () => {
  it("lists a payment's authorize, capture and refund events, newest first, and no other payment's", async () => {
    const client = api(local.url, (await createProject("Events of a payment")).sandbox);
    const first = await payment(client);
    const second = await payment(client);

    for (const [mine, other] of [
      [first, second],
      [second, first],
    ] as const) {
      const byTransaction = await list(client, `transaction_id=${mine.transaction}&limit=100`);
      const names = byTransaction.events.map((event) => event.name);
      for (const name of ["transaction.authorized", "transaction.captured", "transaction.refunded"]) {
        expect(names).toContain(name);
      }
      for (const event of byTransaction.events) {
        expect(event.data.transaction?.id).toBe(mine.transaction);
        expect(event.data.transaction?.id).not.toBe(other.transaction);
      }
      expect(ids(byTransaction)).toEqual([...ids(byTransaction)].sort().reverse());
      expect(byTransaction.total_count).toBe(byTransaction.events.length);
      expect(byTransaction.has_more).toBe(false);

      // The invoice's events are the same ones: each carries the invoice and its transaction.
      const byInvoice = await list(client, `invoice_id=${mine.invoice}&limit=100`);
      for (const event of byInvoice.events) expect(event.data.invoice?.id).toBe(mine.invoice);
      expect(ids(byInvoice)).toEqual(ids(byTransaction));
    }

    // The whole list holds both payments' events: the filter really narrows it.
    const all = await list(client, "limit=100");
    const firstIds = ids(await list(client, `transaction_id=${first.transaction}&limit=100`));
    const secondIds = ids(await list(client, `transaction_id=${second.transaction}&limit=100`));
    expect(firstIds.filter((id) => secondIds.includes(id))).toEqual([]);
    for (const id of [...firstIds, ...secondIds]) expect(ids(all)).toContain(id);
  });

  it("pages through one payment's events: limit, order, start_after, end_before", async () => {
    const client = api(local.url, (await createProject("Events of a payment, paged")).sandbox);
    const { transaction } = await payment(client);
    const every = ids(await list(client, `transaction_id=${transaction}&limit=100`));
    expect(every.length).toBeGreaterThanOrEqual(3);

    const firstPage = await list(client, `transaction_id=${transaction}&limit=2`);
    expect(ids(firstPage)).toEqual(every.slice(0, 2));
    expect(firstPage.has_more).toBe(true);
    expect(firstPage.total_count).toBe(every.length);

    const rest = await list(client, `transaction_id=${transaction}&limit=100&start_after=${every[1]}`);
    expect(ids(rest)).toEqual(every.slice(2));
    expect(rest.has_more).toBe(false);

    const before = await list(client, `transaction_id=${transaction}&limit=1&end_before=${every[2]}`);
    expect(ids(before)).toEqual([every[1]]);
    expect(before.has_more).toBe(true);

    const oldestFirst = await list(client, `transaction_id=${transaction}&limit=100&order=asc`);
    expect(ids(oldestFirst)).toEqual([...every].reverse());
  });

  it("finds nothing for another project's payment, nor for the other environment", async () => {
    const project = await createProject("Events of a payment, owner");
    const owner = api(local.url, project.sandbox);
    const { transaction, invoice } = await payment(owner);
    expect((await list(owner, `transaction_id=${transaction}`)).count).toBeGreaterThan(0);

    const stranger = api(local.url, (await createProject("Events of a payment, stranger")).sandbox);
    for (const client of [stranger, api(local.url, project.live)]) {
      for (const query of [`transaction_id=${transaction}`, `invoice_id=${invoice}`]) {
        const found = await list(client, query);
        expect(found.events).toEqual([]);
        expect(found.total_count).toBe(0);
        expect(found.has_more).toBe(false);
      }
    }
  });

  it("refuses a malformed id, naming the field, and both ids at once", async () => {
    const client = api(local.url, (await createProject("Events of a payment, validation")).sandbox);
    for (const [query, field] of [
      ["transaction_id=iv_01JZ5Y8W9E0000000000000000", "transaction_id"],
      ["transaction_id=tr_nope", "transaction_id"],
      ["invoice_id=tr_01JZ5Y8W9E0000000000000000", "invoice_id"],
      ["invoice_id=%27%20OR%201%3D1", "invoice_id"],
    ] as const) {
      const { status, body } = await client.get(`/events?${query}`);
      expect(status, query).toBe(400);
      expect(body.error_type).toBe(`request.validation.invalid-${field.replace("_", "-")}`);
      expect(body.invalid_fields.map((f: { name: string }) => f.name)).toEqual([field]);
    }
    const both = await client.get(
      "/events?transaction_id=tr_01JZ5Y8W9E0000000000000000&invoice_id=iv_01JZ5Y8W9E0000000000000000",
    );
    expect(both.status).toBe(400);
    expect(both.body.invalid_fields.map((f: { name: string }) => f.name).sort()).toEqual([
      "invoice_id",
      "transaction_id",
    ]);
  });
});
