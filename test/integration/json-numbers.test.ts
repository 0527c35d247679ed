import { describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("JSON numbers test");
const client = local.sandbox;

/** JSON text as a client library writes it, numbers included (`JSON.stringify` would rewrite them). */
const raw = (text: string) => client.post("/invoices", text, { contentType: "application/json" });

describe("JSON numbers", () => {
  it("keeps an amount sent as a JSON number exactly as written", async () => {
    const { status, body } = await raw(
      '{"name": "Order", "amount": 1.10, "currency": "USD", "details": [{"name": "Tea", "amount": 2.50, "quantity": 2}],' +
        ' "tax": {"amount": 0.10, "rate": 5.50}}',
    );
    expect(status).toBe(200);
    expect(body.invoice).toMatchObject({
      amount: "1.10",
      details: [expect.objectContaining({ amount: "2.50", quantity: 2 })],
      tax: { amount: "0.10", rate: "5.50" },
    });
  });

  it.each(["1e2", "1e-400", "1.5E+1", "-0", "12345678901234567890"])(
    "refuses the amount %s with a 400 naming the field",
    async (amount) => {
      const { status, body } = await raw(`{"name": "Order", "amount": ${amount}, "currency": "USD"}`);
      expect(status).toBe(400);
      expect(body.invalid_fields).toEqual([{ name: "amount", message: expect.any(String) }]);
    },
  );

  it("reads integers and booleans sent as JSON values like their form equivalents", async () => {
    const card = await client.post(
      "/cards",
      '{"number": "4242424242424242", "exp_month": 12, "exp_year": 2099, "cvc2": 123}',
      { contentType: "application/json" },
    );
    expect(card.status).toBe(200);
    expect(card.body.card).toMatchObject({ exp_month: 12, exp_year: 2099 });
    const customer = await client.post("/customers", '{"is_business": true, "metadata": {"visits": 3}}', {
      contentType: "application/json",
    });
    expect(customer.status).toBe(200);
    expect(customer.body.customer).toMatchObject({ is_business: true, metadata: { visits: "3" } });
  });
});
