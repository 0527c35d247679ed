import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { payOnlyThrough } from "../support/gateways.ts";

/**
 * Issue 21: `GET /balances/tokens/{id}`, a gift card's vouchers asked of the provider, and the
 * sandbox's gift cards whose balance every authorization, void and refund moves exactly once.
 */
const local = useInProcessApi("Balances test");
const GIFT_CARD = "4000000000007007"; // 20.00 EUR to 2099-06-30, then 30.00 EUR to 2099-12-31
const GIFT_CARD_WITH_EXPIRED_VOUCHER = "4000000000007015"; // 25.00 EUR expired, 10.00 EUR to 2099-12-31

async function environment(name = "Balances") {
  const project = await createProject(name);
  return api(local.url, project.sandbox);
}

async function tokenOf(client: Client, number: string) {
  const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
  const card = (await client.post("/cards", { number, exp_month: 12, exp_year: 2099 })).body.card;
  const made = await client.post(`/customers/${customer.id}/tokens`, { source: card.id });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  return { customerId: customer.id as string, tokenId: made.body.token.id as string };
}

async function balance(client: Client, tokenId: string) {
  const answer = await client.get(`/balances/tokens/${tokenId}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.balances;
}

async function pay(client: Client, token: { customerId: string; tokenId: string }, amount: string) {
  const invoice = (
    await client.post("/invoices", { name: "Gift", amount, currency: "EUR", customer_id: token.customerId })
  ).body.invoice;
  const answer = await client.post(`/invoices/${invoice.id}/authorize`, { source: token.tokenId });
  return { invoiceId: invoice.id as string, answer };
}

describe("GET /balances/tokens/{token_id}", () => {
  it("answers a gift card's vouchers, spent soonest-expiring first by authorizations, given back by refunds and voids", async () => {
    const client = await environment();
    const token = await tokenOf(client, GIFT_CARD);
    expect(await balance(client, token.tokenId)).toEqual({
      vouchers: [
        { amount: "20.00", currency: "EUR", expiry: "2099-06-30" },
        { amount: "30.00", currency: "EUR", expiry: "2099-12-31" },
      ],
      available_balance: { amount: "50.00", currency: "EUR", expiry: "2099-06-30" },
      customer_action: null,
    });

    const paid = await pay(client, token, "25.00");
    expect(paid.answer.status, JSON.stringify(paid.answer.body)).toBe(200);
    expect((await client.post(`/invoices/${paid.invoiceId}/capture`, {})).status).toBe(200);
    expect(await balance(client, token.tokenId)).toMatchObject({
      vouchers: [
        { amount: "0.00", expiry: "2099-06-30" },
        { amount: "25.00", expiry: "2099-12-31" },
      ],
      available_balance: { amount: "25.00", expiry: "2099-12-31" },
    });

    // Beyond the balance: declined, and nothing taken.
    const tooMuch = await pay(client, token, "30.00");
    expect(tooMuch.answer.body.error_type).toBe("card.no-money");
    expect((await balance(client, token.tokenId)).available_balance.amount).toBe("25.00");

    // A refund gives back what it refunds, once, whatever retries it.
    const transactionId = paid.answer.body.transaction.id;
    expect((await client.post(`/transactions/${transactionId}/refunds`, { amount: "5.00" })).status).toBe(
      200,
    );
    expect((await balance(client, token.tokenId)).available_balance.amount).toBe("30.00");

    // A void gives back the whole authorization.
    const held = await pay(client, token, "12.50");
    expect(held.answer.status).toBe(200);
    expect((await balance(client, token.tokenId)).available_balance.amount).toBe("17.50");
    expect((await client.post(`/invoices/${held.invoiceId}/void`, {})).status).toBe(200);
    expect((await balance(client, token.tokenId)).available_balance.amount).toBe("30.00");
  });

  it("never lets two authorizations at once spend the same money", async () => {
    const client = await environment();
    const token = await tokenOf(client, GIFT_CARD);
    const results = await Promise.all([pay(client, token, "30.00"), pay(client, token, "30.00")]);
    const approved = results.filter((result) => result.answer.status === 200);
    expect(approved).toHaveLength(1);
    expect(results.map((result) => result.answer.body.error_type).filter(Boolean)).toEqual(["card.no-money"]);
    expect((await balance(client, token.tokenId)).available_balance.amount).toBe("20.00");
  });

  it("counts no expired voucher", async () => {
    const client = await environment();
    const token = await tokenOf(client, GIFT_CARD_WITH_EXPIRED_VOUCHER);
    expect(await balance(client, token.tokenId)).toEqual({
      vouchers: [{ amount: "10.00", currency: "EUR", expiry: "2099-12-31" }],
      available_balance: { amount: "10.00", currency: "EUR", expiry: "2099-12-31" },
      customer_action: null,
    });
  });

  it("refuses a card that holds no balance, a gateway that tells none, and another project's token", async () => {
    const client = await environment();
    const plain = await tokenOf(client, "4242424242424242");
    const refused = await client.get(`/balances/tokens/${plain.tokenId}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("request.token.no-balance");

    const other = await environment("Someone else");
    expect((await other.get(`/balances/tokens/${plain.tokenId}`)).status).toBe(404);
    expect((await client.get("/balances/tokens/tok_nope")).status).toBe(404);

    // Asked of a gateway that tells no balances (the only enabled card configuration is Stripe's).
    const gift = await tokenOf(client, GIFT_CARD);
    await payOnlyThrough(client, "stripe", { secret_key: "sk_test_x" });
    const unsupported = await client.get(`/balances/tokens/${gift.tokenId}`);
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error_type).toBe("request.gateway.balance-not-supported");
  });
});
