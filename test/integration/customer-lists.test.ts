import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

/** The list routes the client libraries call under a customer (issue 13). */
const local = useInProcessApi("Customer lists test");

async function post(client: Client, path: string, body: Record<string, unknown> = {}) {
  const answer = await client.post(path, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

describe("GET /customers/{id}/transactions", () => {
  it("pages a customer's transactions with the listing envelope, and only that customer's", async () => {
    const client = api(local.url, (await createProject("Customer transactions")).sandbox);
    const [customer, other] = [
      (await post(client, "/customers")).customer,
      (await post(client, "/customers")).customer,
    ];
    const card = async () =>
      (await post(client, "/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })).card.id;
    const pay = async (customerId: string | null) => {
      const invoice = (
        await post(client, "/invoices", {
          name: "n",
          amount: "2.00",
          currency: "EUR",
          customer_id: customerId,
        })
      ).invoice;
      return (await post(client, `/invoices/${invoice.id}/authorize`, { source: await card() })).transaction
        .id;
    };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await pay(customer.id));
    await pay(other.id);
    await pay(null);

    const first = await client.get(`/customers/${customer.id}/transactions?limit=2`);
    expect(first.body).toMatchObject({
      success: true,
      count: 2,
      has_more: true,
      total_count: 3,
      limit: 2,
      order: "desc",
    });
    expect(first.body.transactions.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.transactions[0]).toEqual(
      (await client.get(`/transactions/${ids[2]}`)).body.transaction,
    );

    const next = await client.get(`/customers/${customer.id}/transactions?limit=2&start_after=${ids[1]}`);
    expect(next.body).toMatchObject({ count: 1, has_more: false, total_count: 3 });
    expect(next.body.transactions.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    const ascending = await client.get(
      `/customers/${customer.id}/transactions?order=asc&end_before=${ids[2]}`,
    );
    expect(ascending.body.transactions.map((t: { id: string }) => t.id)).toEqual([ids[0], ids[1]]);
  });

  it("answers an empty page for a customer without payments and 404 for an unknown customer", async () => {
    const client = local.sandbox;
    const customer = (await post(client, "/customers")).customer;
    expect((await client.get(`/customers/${customer.id}/transactions`)).body).toEqual({
      success: true,
      transactions: [],
      count: 0,
      has_more: false,
      total_count: 0,
      limit: 10,
      order: "desc",
    });
    const unknown = await client.get("/customers/cust_01JZZZZZZZZZZZZZZZZZZZZZZZ/transactions");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error_type).toBe("resource.customer.not-found");
    // The live environment holds nothing of the sandbox's.
    expect((await local.live.get(`/customers/${customer.id}/transactions`)).status).toBe(404);
  });
});
