/**
 * Issue 24: a subscription's trial ended early or moved (`PUT /subscriptions/{id}` with
 * `trial_end_at`: `now` or a date), as the dashboard's "End trial now" does. The first iteration is
 * charged exactly once whatever races: the old schedule of a moved trial ends quietly, two ends at
 * once charge once. Each test has an environment (and sandbox clock) of its own.
 */
import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { runSubscriptionJob } from "../../shared/subscriptions/billing.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { type Browser, invited, projectWithOwner } from "../support/dashboard.ts";
import { recordedEvents } from "../support/events.ts";

const local = useInProcessApi("Subscription trial end test");

const DAY = 24 * 3600 * 1000;

interface Environment {
  client: Client;
  scope: string;
}

async function environment(): Promise<Environment> {
  const project = await createProject("Trial end");
  return { client: api(local.url, project.sandbox), scope: project.sandbox.project_id };
}

const plan = { id: "monthly", name: "Monthly", amount: "9.99", currency: "EUR", interval: "1m" };

/** A subscription of a new customer paying by card: with a 7-day trial, or none. */
async function subscribed(env: Environment, trial: "7d" | null = "7d") {
  const planId = trial ? "monthly-with-trial" : "monthly";
  await env.client.post("/plans", { ...plan, id: planId, ...(trial ? { trial_period: trial } : {}) });
  const customer = (await env.client.post("/customers", { first_name: "Ada" })).body.customer;
  const card = (
    await env.client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
  ).body.card;
  const created = await env.client.post("/subscriptions", {
    customer_id: customer.id,
    plan_id: planId,
    source: card.id,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.subscription;
}

async function clockNow(env: Environment): Promise<Date> {
  return new Date((await env.client.get("/sandbox/clock")).body.clock.now);
}

async function advanceTo(env: Environment, at: number) {
  const answer = await env.client.post("/sandbox/clock", { advance_to: new Date(at).toISOString() });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { jobs: { kind: string; outcome: string }[] };
}

/** The subscription's invoices with their payments' statuses, oldest first. */
async function invoicesOf(env: Environment, subscriptionId: string) {
  const { body } = await env.client.get("/invoices?limit=100&order=asc");
  const mine = body.invoices.filter(
    (invoice: { subscription_id: string | null }) => invoice.subscription_id === subscriptionId,
  );
  return Promise.all(
    mine.map(
      async (invoice: {
        transaction_id: string | null;
        amount: string;
        metadata: Record<string, string>;
      }) => ({
        iteration: invoice.metadata.subscription_iteration,
        amount: invoice.amount,
        status: invoice.transaction_id
          ? (await env.client.get(`/transactions/${invoice.transaction_id}`)).body.transaction.status
          : null,
      }),
    ),
  );
}

async function transactionsOf(env: Environment, subscriptionId: string) {
  return (await env.client.get(`/subscriptions/${subscriptionId}/transactions`)).body.transactions;
}

async function eventNames(env: Environment, subscriptionId: string): Promise<string[]> {
  return (await recordedEvents(env.scope))
    .filter((event) => (event.data as { subscription?: { id: string } }).subscription?.id === subscriptionId)
    .map((event) => String(event.name));
}

const firstChargeJob = (env: Environment, subscriptionId: string, due?: string) => ({
  kind: "subscription" as const,
  scope: env.scope,
  subscriptionId,
  action: "charge" as const,
  iteration: 1,
  attempt: 0,
  ...(due ? { due } : {}),
});

describe("ending a trial now", () => {
  it("charges the first iteration once, at once, with its invoice and events; the old schedule then finds nothing", async () => {
    const env = await environment();
    const sub = await subscribed(env);
    const oldEnd = Date.parse(sub.trial_end_at);
    const ended = await env.client.put(`/subscriptions/${sub.id}`, { trial_end_at: "now" });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const now = await clockNow(env);
    expect(Date.parse(ended.body.subscription.trial_end_at)).toBeLessThanOrEqual(now.getTime());
    expect(ended.body.subscription).toMatchObject({ activated: true, iterations: 1, past_due: false });
    expect(await invoicesOf(env, sub.id)).toEqual([{ iteration: "1", amount: "9.99", status: "completed" }]);
    expect(await transactionsOf(env, sub.id)).toHaveLength(1);
    expect(await eventNames(env, sub.id)).toEqual([
      "subscription.created",
      "subscription.updated",
      "subscription.trial.ended",
      "subscription.started",
      "subscription.iterated",
    ]);
    // The next renewal counts from the trial's new end: a month after now.
    expect(Date.parse(ended.body.subscription.iterate_at)).toBeGreaterThan(now.getTime() + 27 * DAY);

    // The schedule made at creation for the old end fires: nothing to do, nothing charged.
    await advanceTo(env, oldEnd + 1000);
    expect(await runSubscriptionJob(firstChargeJob(env, sub.id))).toBe("nothing-to-do");
    expect(await invoicesOf(env, sub.id)).toHaveLength(1);
    expect(await transactionsOf(env, sub.id)).toHaveLength(1);

    // Ended already: a second end is refused, naming where the subscription stands.
    const again = await env.client.put(`/subscriptions/${sub.id}`, { trial_end_at: "now" });
    expect(again.status).toBe(409);
    expect(again.body.error_type).toBe("request.subscription.not-trialing");
    expect(again.body.message).toMatch(/active/);
  });

  it("charges once when two ends come at once", async () => {
    const env = await environment();
    const sub = await subscribed(env);
    const answers = await Promise.all([
      env.client.put(`/subscriptions/${sub.id}`, { trial_end_at: "now" }),
      env.client.put(`/subscriptions/${sub.id}`, { trial_end_at: "now" }),
    ]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses, JSON.stringify(answers.map((answer) => answer.body))).toEqual([200, 409]);
    expect(await invoicesOf(env, sub.id)).toEqual([{ iteration: "1", amount: "9.99", status: "completed" }]);
    expect(await transactionsOf(env, sub.id)).toHaveLength(1);
    expect((await env.client.get(`/subscriptions/${sub.id}`)).body.subscription.iterations).toBe(1);
    const names = await eventNames(env, sub.id);
    expect(names.filter((name) => name === "subscription.iterated")).toHaveLength(1);
    expect(names.filter((name) => name === "subscription.trial.ended")).toHaveLength(1);
  });
});

describe("moving a trial later", () => {
  it("charges nothing at the old date (its schedule ends quietly) and once at the new one", async () => {
    const env = await environment();
    const sub = await subscribed(env);
    const oldEnd = Date.parse(sub.trial_end_at);
    const start = await clockNow(env);
    const newEnd = new Date(start.getTime() + 20 * DAY).toISOString();
    const moved = await env.client.put(`/subscriptions/${sub.id}`, { trial_end_at: newEnd });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.subscription).toMatchObject({
      trial_end_at: newEnd,
      iterate_at: newEnd,
      activated: false,
      active: true,
      iterations: 0,
    });

    const pastOldEnd = await advanceTo(env, oldEnd + 1000);
    expect(pastOldEnd.jobs.filter((job) => job.outcome.startsWith("failed"))).toEqual([]);
    expect(pastOldEnd.jobs.filter((job) => job.outcome === "charged")).toEqual([]);
    // The old schedule, fired now (before the new date): it ends quietly, it is not retried.
    expect(await runSubscriptionJob(firstChargeJob(env, sub.id))).toBe("nothing-to-do");
    // The new date's schedule fired early is retried by its scheduler, as any early job.
    await expect(runSubscriptionJob(firstChargeJob(env, sub.id, newEnd))).rejects.toThrow(/is due at/);
    expect(await invoicesOf(env, sub.id)).toEqual([]);
    // No notice went out for the old date (4 days in): the new date's comes 3 days before it.
    expect(await eventNames(env, sub.id)).toEqual(["subscription.created", "subscription.updated"]);

    const pastNewEnd = await advanceTo(env, Date.parse(newEnd) + 1000);
    expect(pastNewEnd.jobs.filter((job) => job.outcome === "charged")).toHaveLength(1);
    expect(await invoicesOf(env, sub.id)).toEqual([{ iteration: "1", amount: "9.99", status: "completed" }]);
    expect(await transactionsOf(env, sub.id)).toHaveLength(1);
    const after = (await env.client.get(`/subscriptions/${sub.id}`)).body.subscription;
    expect(after).toMatchObject({ activated: true, iterations: 1 });
    expect(await eventNames(env, sub.id)).toEqual([
      "subscription.created",
      "subscription.updated",
      "subscription.trial.ending_soon",
      "subscription.trial.ended",
      "subscription.started",
      "subscription.iterated",
    ]);
    // Either schedule fired again later: nothing more is charged.
    expect(await runSubscriptionJob(firstChargeJob(env, sub.id))).toBe("nothing-to-do");
    expect(await runSubscriptionJob(firstChargeJob(env, sub.id, newEnd))).toBe("nothing-to-do");
    expect(await transactionsOf(env, sub.id)).toHaveLength(1);
  });
});

describe("a trial end refused", () => {
  it("after the first charge, for a canceled subscription, in the past, too far or malformed", async () => {
    const env = await environment();
    const charged = await subscribed(env, null);
    expect((await env.client.get(`/subscriptions/${charged.id}`)).body.subscription.iterations).toBe(1);
    const afterCharge = await env.client.put(`/subscriptions/${charged.id}`, { trial_end_at: "now" });
    expect(afterCharge.status).toBe(409);
    expect(afterCharge.body.error_type).toBe("request.subscription.not-trialing");
    expect(afterCharge.body.message).toMatch(/active/);

    const trialing = await subscribed(env);
    const now = await clockNow(env);
    for (const [value, pattern] of [
      [new Date(now.getTime() - DAY).toISOString(), /future/],
      [new Date(now.getTime() + 800 * DAY).toISOString(), /2 years/],
      ["tomorrow", /now/],
    ] as const) {
      const answer = await env.client.put(`/subscriptions/${trialing.id}`, { trial_end_at: value });
      expect(answer.status, value).toBe(400);
      expect(answer.body.invalid_fields, value).toEqual([
        { name: "trial_end_at", message: expect.stringMatching(pattern) },
      ]);
    }
    expect((await env.client.get(`/subscriptions/${trialing.id}`)).body.subscription.trial_end_at).toBe(
      trialing.trial_end_at,
    );

    expect((await env.client.del(`/subscriptions/${trialing.id}`)).status).toBe(200);
    const canceled = await env.client.put(`/subscriptions/${trialing.id}`, { trial_end_at: "now" });
    expect(canceled.status).toBe(409);
    expect(canceled.body.error_type).toBe("request.subscription.canceled");
    expect(await invoicesOf(env, trialing.id)).toEqual([]);
  });
});

describe("a support person", () => {
  it("may end a trial from the dashboard, and still not change the amount", async () => {
    const owned = await projectWithOwner(local.url, "Trial end by support");
    const support = (await invited(owned.owner, "support")).browser as Browser;
    const env = { client: api(local.url, owned.project.sandbox), scope: owned.project.sandbox.project_id };
    const sub = await subscribed(env);

    const amount = await support.put(`/subscriptions/${sub.id}`, { trial_end_at: "now", amount: "1.00" });
    expect(amount.status).toBe(403);
    expect(amount.body.invalid_fields).toEqual([{ name: "amount", message: expect.any(String) }]);
    expect(await invoicesOf(env, sub.id)).toEqual([]);

    const ended = await support.put(`/subscriptions/${sub.id}`, { trial_end_at: "now" });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(ended.body.subscription).toMatchObject({ activated: true, iterations: 1, amount: "9.99" });
    expect(await invoicesOf(env, sub.id)).toEqual([{ iteration: "1", amount: "9.99", status: "completed" }]);
  });
});
