/**
 * The DynamoDB round trips on each request's own path (issue 8's budget): what a request waits for
 * in turn, counted by the local API for every request it serves. Calls sent together count once;
 * the sandbox provider's own records count as the provider call, apart from the API's.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { describe, expect, it, vi } from "vitest";
import type { RoundTrips } from "../../shared/db/round-trips.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";

const seen: { last?: { route: string; trips: RoundTrips } } = {};
let metering = true;
const local = useInProcessApi("Round trips test", {
  roundTrips: (route, trips) => {
    seen.last = { route, trips: { ...trips } };
  },
  meteringRoundTrips: () => metering,
});

/** The round trips of one request, which must succeed. */
async function tripsOf(send: () => Promise<{ status: number; body: Record<string, unknown> }>) {
  seen.last = undefined;
  const { status, body } = await send();
  expect(status, JSON.stringify(body)).toBe(200);
  const reported = seen.last as { trips: RoundTrips } | undefined;
  if (!reported) throw new Error("The local API reported no round trips");
  return { body, trips: reported.trips };
}

const invoice = { name: "Order 7", amount: "25.00", currency: "EUR" };
const cardNumber = { number: "4242424242424242", exp_month: 12, exp_year: 2099 };

describe("DynamoDB round trips on a request's path", () => {
  it("creates and reads in one", async () => {
    const client = local.sandbox;
    // A container keeps the environments it authenticated for 30 s: only its first request reads one.
    const unwarmed = await tripsOf(() => client.get("/customers?limit=1"));
    expect(unwarmed.trips.sequential).toBe(2);
    const created = await tripsOf(() => client.post("/customers", { first_name: "Ada" }));
    expect(created.trips).toMatchObject({ calls: 1, sequential: 1 });
    const id = (created.body.customer as { id: string }).id;
    expect((await tripsOf(() => client.get(`/customers/${id}`))).trips).toMatchObject({ sequential: 1 });
    expect((await tripsOf(() => client.post("/invoices", invoice))).trips).toMatchObject({
      calls: 1,
      sequential: 1,
    });
    // A create claims its Idempotency-Key in its own transaction; the retry finds it taken there.
    const idempotencyKey = `round-trips-${Date.now()}`;
    const keyed = await tripsOf(() => client.post("/invoices", invoice, { idempotencyKey }));
    expect(keyed.trips).toMatchObject({ calls: 1, sequential: 1 });
    const retried = await tripsOf(() => client.post("/invoices", invoice, { idempotencyKey }));
    expect(retried.trips).toMatchObject({ calls: 1, sequential: 1 });
    expect(retried.body).toEqual(keyed.body);
    // The page and its exact count, sent together.
    expect((await tripsOf(() => client.get("/customers?limit=5"))).trips).toMatchObject({ sequential: 1 });
  });

  it("authorizes, captures, and captures with a source in three round trips each, besides the provider", async () => {
    const client = api(local.url, local.project.sandbox);
    const card = (await client.post("/cards", cardNumber)).body.card as { id: string };
    // The environment's gateway configurations are cached per container from the first payment on.
    const first = (await client.post("/invoices", invoice)).body.invoice as { id: string };
    await tripsOf(() => client.post(`/invoices/${first.id}/capture`, { source: card.id }));

    // A capture with a source: one read; the transaction, reserved for its authorization and the
    // capture chained to it; the write that settles both. The provider is called twice in between.
    const paid = (await client.post("/invoices", invoice)).body.invoice as { id: string };
    const both = await tripsOf(() => client.post(`/invoices/${paid.id}/capture`, { source: card.id }));
    expect(both.trips).toMatchObject({ sequential: 3, providerCalls: 2 });
    expect((both.body.transaction as { status: string }).status).toBe("completed");

    const { id } = (await client.post("/invoices", invoice)).body.invoice as { id: string };
    // One read of invoice, transaction and card; the reserved transaction; the settlement.
    const authorized = await tripsOf(() => client.post(`/invoices/${id}/authorize`, { source: card.id }));
    expect(authorized.trips).toMatchObject({ sequential: 3, providerCalls: 1 });
    // One read of invoice and transaction; the reservation; the settlement.
    const captured = await tripsOf(() => client.post(`/invoices/${id}/capture`, {}));
    expect(captured.trips).toMatchObject({ sequential: 3, providerCalls: 1 });
    expect((captured.body.transaction as { status: string }).status).toBe("completed");
  });

  it("subscribes a customer with a card in three: one read, the schedule, one transaction", async () => {
    const client = api(local.url, local.project.sandbox);
    await client.post("/plans", {
      id: "round-trips-monthly",
      name: "Monthly",
      amount: "9.99",
      currency: "EUR",
      interval: "1m",
      trial_period: "1d",
    });
    const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer as { id: string };
    const card = (await client.post("/cards", cardNumber)).body.card as { id: string };
    // Customer, plan and card read together; the trial's end scheduled (the local stack's scheduler
    // keeps its schedules in the table; in AWS it is EventBridge Scheduler); the subscription, its
    // customer token and their events in one transaction.
    const subscribed = await tripsOf(() =>
      client.post("/subscriptions", {
        customer_id: customer.id,
        source: card.id,
        plan_id: "round-trips-monthly",
      }),
    );
    expect(subscribed.trips).toMatchObject({ calls: 5, sequential: 3 });
  });
});

describe("the round-trip counter", () => {
  it("counts a request only while metering is asked for, and turns its storage off meanwhile", async () => {
    const client = local.sandbox;
    const created = await tripsOf(() => client.post("/customers", { first_name: "Ada" }));
    const id = (created.body.customer as { id: string }).id;
    metering = false;
    try {
      seen.last = undefined;
      // Once used, an AsyncLocalStorage's hooks stay on, paid by every promise, until it is disabled.
      const disabled = vi.spyOn(AsyncLocalStorage.prototype, "disable");
      expect((await client.get(`/customers/${id}`)).status).toBe(200);
      expect(seen.last).toBeUndefined();
      expect(disabled).toHaveBeenCalled();
      disabled.mockRestore();
    } finally {
      metering = true;
    }
    expect((await tripsOf(() => client.get(`/customers/${id}`))).trips).toMatchObject({ sequential: 1 });
  });
});
