import { describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Hostile keys test");
const client = local.sandbox;

/** Found by the fuzz suite: a stored map with an own `constructor` was a 500 on every route that keeps metadata. */
describe("keys every JavaScript object has", () => {
  const metadata = { constructor: "Renault", toString: "x", plan: "gold" };

  it("are dropped from stored maps in JSON as in form bodies, instead of failing the write", async () => {
    const json = await client.post("/customers", { metadata });
    expect(json.status).toBe(200);
    expect(json.body.customer.metadata).toEqual({ plan: "gold" });
    const form = await client.post("/customers", { metadata }, { form: true });
    expect(form.body.customer.metadata).toEqual(json.body.customer.metadata);
  });

  it("are dropped from every dictionary of an invoice", async () => {
    const { status, body } = await client.post("/invoices", {
      name: "Order",
      amount: "10.00",
      currency: "USD",
      metadata,
      gateway_data: metadata,
      external_fraud_tools: metadata,
    });
    expect(status).toBe(200);
    expect(body.invoice).toMatchObject({
      metadata: { plan: "gold" },
      gateway_data: { plan: "gold" },
      external_fraud_tools: { plan: "gold" },
    });
  });
});
