import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../support/webhooks.ts";
import { api, type RunningStack, startStack } from "./harness.ts";

/**
 * Issue 11's walk, as a merchant makes it against `npm start` over HTTP: a monthly plan with a
 * 7-day trial, a subscription with a card, the sandbox clock moved past the trial and a month on,
 * exactly one charge each time, the events at a webhook receiver, and no charge after a
 * cancellation at the end of the period. The stack has its own DynamoDB Local.
 */
let stack: RunningStack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver("subscriptions");
  stack = await startStack({ dynamodb: "own" });
});

afterAll(async () => {
  await stack?.stop();
  await receiver.close();
});

const DAY = 24 * 3600 * 1000;

describe("subscriptions on the local stack (npm start)", () => {
  it("bill themselves through the sandbox clock: once after the trial, once a month, never after canceling", async () => {
    const sandbox = api(stack.url, stack.credentials.sandbox);
    await sandbox.put(`/projects/${stack.credentials.sandbox.project_id}`, { webhook_url: receiver.url });
    const advance = async (ms: number) => {
      const now = Date.parse((await sandbox.get("/sandbox/clock")).body.clock.now);
      const answer = await sandbox.post("/sandbox/clock", { advance_to: new Date(now + ms).toISOString() });
      expect(answer.status).toBe(200);
      return answer.body;
    };
    const chargedInvoices = async (subscriptionId: string) =>
      (await sandbox.get("/invoices?limit=100")).body.invoices.filter(
        (invoice: { subscription_id: string | null; transaction_id: string | null }) =>
          invoice.subscription_id === subscriptionId && invoice.transaction_id !== null,
      );

    expect(
      (
        await sandbox.post("/plans", {
          id: "gold-monthly",
          name: "Gold",
          amount: "19.00",
          currency: "EUR",
          interval: "1m",
          trial_period: "7d",
        })
      ).status,
    ).toBe(200);
    const customer = (await sandbox.post("/customers", { first_name: "Grace", email: "grace@example.com" }))
      .body.customer;
    const card = (
      await sandbox.post("/cards", { number: "4242424242424242", exp_month: 10, exp_year: 2099, cvc2: "123" })
    ).body.card;
    const created = await sandbox.post("/subscriptions", {
      customer_id: customer.id,
      plan_id: "gold-monthly",
      source: card.id,
    });
    expect(created.status).toBe(200);
    const id = created.body.subscription.id;

    await advance(8 * DAY);
    expect(await chargedInvoices(id)).toHaveLength(1);
    await advance(31 * DAY);
    expect(await chargedInvoices(id)).toHaveLength(2);

    const cancel = await sandbox.del(`/subscriptions/${id}?cancel_at_end=true`);
    expect(cancel.body.subscription.pending_cancellation).toBe(true);
    await advance(62 * DAY);
    expect((await sandbox.get(`/subscriptions/${id}`)).body.subscription.canceled).toBe(true);
    expect(await chargedInvoices(id)).toHaveLength(2);

    // Every event of the subscription reached the receiver, each fetched by id as the spec says.
    const names: string[] = [];
    const expected = [
      "subscription.created",
      "subscription.trial.ending_soon",
      "subscription.trial.ended",
      "subscription.started",
      "subscription.iterated",
      "subscription.iterated",
      "subscription.updated",
      "subscription.canceled",
    ];
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      names.length = 0;
      for (const request of receiver.requests) {
        const event = (await sandbox.get(`/events/${JSON.parse(request.body).event_id}`)).body.event;
        if (event.name.startsWith("subscription.")) names.push(event.name);
      }
      if (names.length >= expected.length) break;
      await new Promise((done) => setTimeout(done, 200));
    }
    expect(names.sort()).toEqual([...expected].sort());
  });
});
