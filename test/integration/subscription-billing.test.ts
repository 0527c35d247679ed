import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { dynamo } from "../../shared/db/client.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { advanceSteps, COMMON_YEAR, LEAP_YEAR } from "../support/calendar.ts";
import { recordedEvents } from "../support/events.ts";

/**
 * Issue 22: add-ons, discounts and proration on a subscription, on the sandbox clock. Each test has
 * an environment of its own (its own clock), moved to a known calendar first, so every amount here
 * is computed by hand from the calendar: January has 31 days, February 28 (29 in the leap-year
 * test). Dates are written in the first such year after today's (`test/support/calendar.ts`).
 */
const local = useInProcessApi("Subscription billing test");

/** A timestamp within the second `second` (`Y-01-01T00:00:00`). */
const at = (second: string) => expect.stringMatching(new RegExp(`^${second}\\.\\d{3}Z$`));

interface Environment {
  client: Client;
  scope: string;
}

/** A date of the test's calendar: `Y` is the first year after today's with a 28-day February. */
const on = (text: string) => text.replace(/^Y/, String(COMMON_YEAR));

async function environment(startAt = on("Y-01-01T00:00:00.000Z")): Promise<Environment> {
  const project = await createProject("Subscription billing");
  const env = { client: api(local.url, project.sandbox), scope: project.sandbox.project_id };
  const now = new Date((await env.client.get("/sandbox/clock")).body.clock.now);
  for (const step of advanceSteps(now, new Date(startAt))) await advanceTo(env, step);
  return env;
}

async function advanceTo(env: Environment, at: string | number) {
  const answer = await env.client.post("/sandbox/clock", { advance_to: new Date(at).toISOString() });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  for (const job of answer.body.jobs) expect(job.outcome, job.name).not.toMatch(/^failed/);
  return answer.body;
}

/**
 * Moves the clock to `at` while the renewal due on the way fails its first run before making its
 * invoice (a scheduler running late, or a crash): the clock stops at its due time, the job left to
 * run again.
 */
async function advanceWithRenewalDelayed(env: Environment, at: string) {
  const send = dynamo.send.bind(dynamo);
  let failed = false;
  const spy = vi.spyOn(dynamo, "send").mockImplementation(((command: { input: unknown }) => {
    if (!failed && command instanceof TransactWriteCommand && JSON.stringify(command.input).includes("iv_")) {
      failed = true;
      return Promise.reject(new Error("Injected fault: the renewal's first run stops before its invoice"));
    }
    return send(command as never);
  }) as never);
  try {
    const answer = await env.client.post("/sandbox/clock", { advance_to: at });
    expect(answer.body.jobs.map((job: { outcome: string }) => job.outcome)).toEqual([
      expect.stringMatching(/^failed/),
    ]);
  } finally {
    spy.mockRestore();
  }
}

async function subscribe(env: Environment, terms: Record<string, unknown> = {}) {
  const customer = (await env.client.post("/customers", { first_name: "Ada" })).body.customer;
  const card = (
    await env.client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
  ).body.card;
  const created = await env.client.post("/subscriptions", {
    customer_id: customer.id,
    name: "Team",
    amount: "30.00",
    currency: "EUR",
    interval: "1m",
    source: card.id,
    ...terms,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.subscription as { id: string; iterate_at: string; customer_id: string };
}

interface Detail {
  name: string;
  type: string;
  amount: string;
  quantity: number;
  metadata: Record<string, string>;
}

/** The subscription's renewal invoices, oldest first: amount and lines as `type name amount×quantity`. */
async function renewals(env: Environment, subscriptionId: string) {
  const { body } = await env.client.get("/invoices?limit=100&order=asc");
  return body.invoices
    .filter((invoice: { subscription_id: string | null }) => invoice.subscription_id === subscriptionId)
    .map((invoice: { amount: string; details: Detail[]; metadata: Record<string, string> }) => ({
      iteration: Number(invoice.metadata.subscription_iteration),
      amount: invoice.amount,
      lines: invoice.details.map((line) => `${line.type} ${line.name} ${line.amount}×${line.quantity}`),
    }));
}

async function subscription(env: Environment, id: string) {
  return (await env.client.get(`/subscriptions/${id}`)).body.subscription;
}

describe("add-ons with proration", () => {
  it("previews, then charges, the rest of the period by its real length, with the next renewal", async () => {
    const env = await environment();
    const sub = await subscribe(env);
    // The clock runs on between requests: times are to the second.
    expect(await subscription(env, sub.id)).toMatchObject({
      current_period_start: at(on("Y-01-01T00:00:00")),
      current_period_end: at(on("Y-02-01T00:00:00")),
      credit_balance: "0.00",
    });
    await advanceTo(env, on("Y-01-11T00:00:00.000Z"));
    const addon = {
      name: "Seat",
      amount: "10.00",
      quantity: 2,
      prorate: true,
      proration_date: on("Y-01-11T00:00:00.000Z"),
    };

    // 2 × 10.00 for 21 of January's 31 days: 20.00 × 21 / 31 = 13.548… → 13.55.
    const preview = await env.client.post(`/subscriptions/${sub.id}/addons`, { ...addon, preview: true });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body).toMatchObject({
      preview: true,
      addon: { name: "Seat", amount: "10.00", quantity: 2, subscription_id: sub.id },
      proration: { amount: "13.55", from: on("Y-01-11T00:00:00.000Z"), to: at(on("Y-02-01T00:00:00")) },
      upcoming_charge: { iteration: 2, amount: "63.55", due_at: at(on("Y-02-01T00:00:00")) },
    });
    expect((await env.client.get(`/subscriptions/${sub.id}/addons`)).body.addons).toEqual([]);

    const made = await env.client.post(`/subscriptions/${sub.id}/addons`, addon);
    expect(made.body).toMatchObject({ preview: false, proration: { amount: "13.55" } });
    // What the preview said is what is now due (the add-on's id aside: the preview's was never made).
    const withoutIds = (charge: { lines: Array<{ addon_id?: string }> }) => ({
      ...charge,
      lines: charge.lines.map(({ addon_id, ...line }) => line),
    });
    expect(withoutIds(made.body.upcoming_charge)).toEqual(withoutIds(preview.body.upcoming_charge));
    expect((await env.client.get(`/subscriptions/${sub.id}/addons`)).body).toMatchObject({
      addons: [{ id: made.body.addon.id, quantity: 2 }],
      total_count: 1,
    });

    await advanceTo(env, on("Y-02-01T00:00:01.000Z"));
    expect(await renewals(env, sub.id)).toEqual([
      { iteration: 1, amount: "30.00", lines: ["plan Team 30.00×1"] },
      {
        iteration: 2,
        amount: "63.55",
        lines: ["plan Team 30.00×1", "addon Seat 10.00×2", "proration Seat × 2 added: 21 of 31 days 13.55×1"],
      },
    ]);
    // February has 28 days: the next renewal bills plan and add-on alone.
    await advanceTo(env, on("Y-03-01T00:00:01.000Z"));
    expect((await renewals(env, sub.id)).map((renewal: { amount: string }) => renewal.amount)).toEqual([
      "30.00",
      "63.55",
      "50.00",
    ]);
  });

  it("credits a removal, carries a credit larger than a renewal to the ones after, and charges nothing meanwhile", async () => {
    const env = await environment();
    const sub = await subscribe(env, { amount: "5.00" });
    const addon = (
      await env.client.post(`/subscriptions/${sub.id}/addons`, { name: "Storage", amount: "62.00" })
    ).body.addon;
    // Not prorated: billed from the next renewal on.
    await advanceTo(env, on("Y-02-01T00:00:01.000Z"));
    // Removed halfway through February (14 of 28 days): 62.00 × 14 / 28 = 31.00 back.
    await advanceTo(env, on("Y-02-15T00:00:00.000Z"));
    const removed = await env.client.del(`/subscriptions/${sub.id}/addons/${addon.id}?prorate=true`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.proration).toMatchObject({ amount: "-31.00" });
    expect(removed.body.upcoming_charge).toMatchObject({ amount: "0.00", credit_left: "26.00" });

    await advanceTo(env, on("Y-05-01T00:00:01.000Z"));
    // March: 5.00 − 31.00 → nothing, 26.00 left; April: 5.00 − 26.00 → nothing, 21.00 left; …
    expect((await renewals(env, sub.id)).map((renewal: { amount: string }) => renewal.amount)).toEqual([
      "5.00",
      "67.00",
    ]);
    expect(await subscription(env, sub.id)).toMatchObject({ iterations: 5, credit_balance: "16.00" });
    const iterated = (await recordedEvents(env.scope)).filter(
      (event) =>
        event.name === "subscription.iterated" &&
        (event.data as { subscription: { id: string } }).subscription.id === sub.id,
    );
    expect(iterated.map((event) => (event.data as { invoice: unknown }).invoice === null)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
    const third = iterated[2]?.data as { charge: { amount: string; credit_left: string } } | undefined;
    expect(third?.charge).toMatchObject({
      amount: "0.00",
      credit_left: "26.00",
    });
  });

  it("counts every concurrent increment once, each prorated, their sum exact to the cent", async () => {
    const env = await environment();
    const sub = await subscribe(env);
    const addon = (await env.client.post(`/subscriptions/${sub.id}/addons`, { name: "Seat", amount: "1.00" }))
      .body.addon;
    await advanceTo(env, on("Y-01-20T00:00:00.000Z"));
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        env.client.put(`/subscriptions/${sub.id}/addons/${addon.id}`, {
          quantity: 1,
          increment_quantity_by: 1,
          prorate: true,
        }),
      ),
    );
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect((await env.client.get(`/subscriptions/${sub.id}/addons/${addon.id}`)).body.addon.quantity).toBe(9);
    // Each: 1.00 × 12 / 31 = 0.387…; eight of them 3.096… → 3.10 in all, whatever each was rounded to.
    const total = answers.reduce(
      (sum, answer) => sum + Math.round(Number(answer.body.proration.amount) * 100),
      0,
    );
    expect(total).toBe(310);
    await advanceTo(env, on("Y-02-01T00:00:01.000Z"));
    // 30.00 + 9 × 1.00 + 3.10.
    expect((await renewals(env, sub.id))[1]).toMatchObject({ amount: "42.10" });
  });

  it("refuses what cannot be billed, naming the field, and changes nothing", async () => {
    const env = await environment();
    const sub = await subscribe(env);
    const addon = (await env.client.post(`/subscriptions/${sub.id}/addons`, { name: "Seat", amount: "1.00" }))
      .body.addon;
    await env.client.post("/plans", {
      id: "yearly",
      name: "Yearly",
      amount: "5.00",
      currency: "EUR",
      interval: "1y",
    });
    await env.client.post("/plans", {
      id: "usd",
      name: "USD",
      amount: "5.00",
      currency: "USD",
      interval: "1m",
    });
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ["POST", "", { amount: "1.00" }, "name"],
      ["POST", "", { name: "x" }, "amount"],
      ["POST", "", { name: "x", amount: "1.001" }, "amount"],
      ["POST", "", { name: "x", amount: "1.00", quantity: 0 }, "quantity"],
      ["POST", "", { name: "x", amount: "1.00", type: "usage" }, "type"],
      ["POST", "", { plan_id: "yearly" }, "plan_id"],
      ["POST", "", { plan_id: "usd" }, "plan_id"],
      [
        "POST",
        "",
        { name: "x", amount: "1.00", prorate: true, proration_date: "2026-12-01T00:00:00Z" },
        "proration_date",
      ],
      ["PUT", `/${addon.id}`, { increment_quantity_by: -1 }, "increment_quantity_by"],
      ["PUT", `/${addon.id}`, { quantity: "many" }, "quantity"],
    ];
    for (const [method, path, body, field] of cases) {
      const url = `/subscriptions/${sub.id}/addons${path}`;
      const answer = method === "POST" ? await env.client.post(url, body) : await env.client.put(url, body);
      expect(answer.status, `${method} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.invalid_fields.map((item: { name: string }) => item.name)).toContain(field);
    }
    expect((await env.client.get(`/subscriptions/${sub.id}/addons`)).body.total_count).toBe(1);
    const unknown = await env.client.get(`/subscriptions/${sub.id}/addons/addon_01JZ5Y8W9E0000000000000000`);
    expect(unknown).toMatchObject({ status: 404, body: { error_type: "resource.addon.not-found" } });
    // The Python client's literals in a DELETE's query: not prorated, not a preview.
    const removed = await env.client.del(
      `/subscriptions/${sub.id}/addons/${addon.id}?prorate=False&preview=None`,
    );
    expect(removed.body).toMatchObject({ success: true, preview: false, proration: null });
    expect((await env.client.get(`/subscriptions/${sub.id}/addons`)).body.total_count).toBe(0);
  });
});

describe("a change racing its renewal", () => {
  it("leaves the renewal due as it was due: the change after its due time is prorated into the next one", async () => {
    const env = await environment();
    const sub = await subscribe(env);
    await advanceTo(env, on("Y-01-02T00:00:00.000Z"));
    // The renewal's job has not run yet at its due time (a late scheduler) when the change comes.
    await advanceWithRenewalDelayed(env, on("Y-02-01T12:00:00.000Z"));
    expect((await env.client.get("/sandbox/clock")).body.clock.now).toEqual(at(on("Y-02-01T00:00:00")));
    const made = await env.client.post(`/subscriptions/${sub.id}/addons`, {
      name: "Seat",
      amount: "28.00",
      prorate: true,
      proration_date: on("Y-02-15T00:00:00.000Z"),
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // February's renewal was due without it; its proration (14 of 28 days) goes with March's.
    expect(made.body.proration).toMatchObject({ amount: "14.00", from: on("Y-02-15T00:00:00.000Z") });
    expect(made.body.upcoming_charge).toMatchObject({ iteration: 3, amount: "72.00" });
    await advanceTo(env, on("Y-03-01T00:00:01.000Z"));
    expect((await renewals(env, sub.id)).map((renewal: { amount: string }) => renewal.amount)).toEqual([
      "30.00",
      "30.00",
      "72.00",
    ]);
  });
});

describe("a change at the same time as its renewal", () => {
  it("charges the renewal as it was due whichever commits first, three times over", async () => {
    for (let round = 0; round < 3; round++) {
      const env = await environment();
      const sub = await subscribe(env);
      await advanceTo(env, on("Y-01-02T00:00:00.000Z"));
      await advanceWithRenewalDelayed(env, on("Y-02-01T12:00:00.000Z"));
      // The renewal's job (run by the clock's advance) and a change, both at its due time.
      const [advanced, made] = await Promise.all([
        env.client.post("/sandbox/clock", { advance_to: on("Y-02-01T12:00:00.000Z") }),
        env.client.post(`/subscriptions/${sub.id}/addons`, {
          name: "Seat",
          amount: "28.00",
          prorate: true,
          proration_date: on("Y-02-15T00:00:00.000Z"),
        }),
      ]);
      expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      expect(made.body.proration).toMatchObject({ amount: "14.00" });
      await advanceTo(env, on("Y-03-01T00:00:01.000Z"));
      expect((await renewals(env, sub.id)).map((renewal: { amount: string }) => renewal.amount)).toEqual([
        "30.00",
        "30.00",
        "72.00",
      ]);
    }
  });
});

describe("a plan changed mid-period", () => {
  it("from the next renewal without prorate; at once with prorate, the difference charged with the next renewal", async () => {
    const env = await environment();
    const sub = await subscribe(env);
    await env.client.post("/plans", {
      id: "pro",
      name: "Pro",
      amount: "61.00",
      currency: "EUR",
      interval: "1m",
    });
    await env.client.post("/plans", {
      id: "pro-yearly",
      name: "Pro",
      amount: "600.00",
      currency: "EUR",
      interval: "1y",
    });
    await advanceTo(env, on("Y-01-21T00:00:00.000Z"));
    const interval = await env.client.put(`/subscriptions/${sub.id}`, {
      plan_id: "pro-yearly",
      prorate: true,
    });
    expect(interval.status).toBe(400);
    expect(interval.body.invalid_fields[0].name).toBe("prorate");

    // 31.00 more a month for 11 of 31 days: 11.00.
    const preview = await env.client.put(`/subscriptions/${sub.id}`, {
      plan_id: "pro",
      prorate: true,
      preview: true,
    });
    expect(preview.body).toMatchObject({
      preview: true,
      subscription: { amount: "61.00", plan_id: "pro" },
      proration: { amount: "11.00" },
      upcoming_charge: { amount: "72.00" },
    });
    expect(await subscription(env, sub.id)).toMatchObject({ amount: "30.00" });
    const changed = await env.client.put(`/subscriptions/${sub.id}`, { plan_id: "pro", prorate: true });
    expect(changed.body).toMatchObject({
      subscription: { amount: "61.00", next_terms: null },
      proration: { amount: "11.00" },
    });
    await advanceTo(env, on("Y-02-01T00:00:01.000Z"));
    expect((await renewals(env, sub.id))[1]).toEqual({
      iteration: 2,
      amount: "72.00",
      lines: ["plan Pro 61.00×1", "proration Team → Pro: 11 of 31 days 11.00×1"],
    });
  });
});

describe("discounts", () => {
  it("apply a coupon's percentage for its iterations, then amounts, in order, never below zero", async () => {
    const env = await environment();
    await env.client.post("/coupons", {
      id: "SPRING20",
      percent_off: "20",
      iteration_count: 2,
      max_redemptions: 2,
    });
    await env.client.post("/coupons", { id: "USD5", amount_off: "5.00", currency: "USD" });
    const sub = await subscribe(env, { amount: "50.00" });
    const fixed = await env.client.post(`/subscriptions/${sub.id}/discounts`, {
      name: "Goodwill",
      amount: "3.00",
      expires_at: on("Y-03-15T00:00:00.000Z"),
    });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
    // A preview redeems nothing and makes nothing, and says what the next renewal would be.
    const preview = await env.client.post(`/subscriptions/${sub.id}/discounts`, {
      coupon_id: "SPRING20",
      preview: true,
    });
    expect(preview.body).toMatchObject({ preview: true, upcoming_charge: { amount: "37.00" } });
    expect((await env.client.get("/coupons/SPRING20")).body.coupon.redeemed_number).toBe(0);
    const coupon = await env.client.post(`/subscriptions/${sub.id}/discounts`, { coupon_id: "SPRING20" });
    expect(coupon.body.discount).toMatchObject({
      coupon_id: "SPRING20",
      percent_off: "20",
      iteration_count: 2,
    });
    expect((await env.client.get("/coupons/SPRING20")).body.coupon.redeemed_number).toBe(1);
    const again = await env.client.post(`/subscriptions/${sub.id}/discounts`, { coupon_id: "SPRING20" });
    expect(again).toMatchObject({ status: 409, body: { error_type: "request.discount.coupon-applied" } });
    const currency = await env.client.post(`/subscriptions/${sub.id}/discounts`, { coupon_id: "USD5" });
    expect(currency.status).toBe(400);
    expect(currency.body.invalid_fields[0].name).toBe("coupon_id");
    const unknown = await env.client.post(`/subscriptions/${sub.id}/discounts`, { coupon_id: "NOPE" });
    expect(unknown).toMatchObject({ status: 404, body: { error_type: "resource.coupon.not-found" } });
    expect((await env.client.get(`/subscriptions/${sub.id}/discounts`)).body.total_count).toBe(2);

    await advanceTo(env, on("Y-05-01T00:00:01.000Z"));
    // 50.00 − 20 % (10.00) − 3.00 = 37.00 in February and March; April: the coupon used up and the
    // goodwill expired (due after March 15): 50.00.
    const all = await renewals(env, sub.id);
    expect(all.map((renewal: { amount: string }) => renewal.amount)).toEqual([
      "50.00",
      "37.00",
      "37.00",
      "50.00",
      "50.00",
    ]);
    expect(all[1].lines).toEqual([
      "plan Team 50.00×1",
      "discount SPRING20 10.00×1",
      "discount Goodwill 3.00×1",
    ]);
    expect((await env.client.get(`/subscriptions/${sub.id}/discounts`)).body.total_count).toBe(0);
  });

  it("never takes a renewal below zero, and counts a coupon's redemptions exactly under concurrency", async () => {
    const env = await environment();
    await env.client.post("/coupons", {
      id: "BIG",
      amount_off: "80.00",
      currency: "EUR",
      max_redemptions: 3,
    });
    const subs = await Promise.all(Array.from({ length: 6 }, () => subscribe(env)));
    const answers = await Promise.all(
      subs.map((sub) => env.client.post(`/subscriptions/${sub.id}/discounts`, { coupon_id: "BIG" })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 400, 400, 400]);
    for (const refused of answers.filter((answer) => answer.status === 400))
      expect(refused.body).toMatchObject({ error_type: "request.coupon.exhausted" });
    expect((await env.client.get("/coupons/BIG")).body.coupon.redeemed_number).toBe(3);
    await advanceTo(env, on("Y-02-01T00:00:01.000Z"));
    const discounted = subs.filter((_, index) => answers[index]?.status === 200);
    for (const sub of discounted) {
      // 30.00 − 80.00: nothing charged, and a discount is not a credit: nothing carried.
      expect(await subscription(env, sub.id)).toMatchObject({ iterations: 2, credit_balance: "0.00" });
      expect(await renewals(env, sub.id)).toHaveLength(1);
    }
  });
});

describe("a subscription's customer and transactions", () => {
  it("answers the customer, and the transactions of its renewals naming it", async () => {
    const env = await environment();
    const sub = await subscribe(env);
    await advanceTo(env, on("Y-03-01T00:00:01.000Z"));
    const customer = await env.client.get(`/subscriptions/${sub.id}/customers`);
    expect(customer.body.customer.id).toBe(sub.customer_id);
    const transactions = await env.client.get(`/subscriptions/${sub.id}/transactions?order=asc&limit=2`);
    expect(transactions.body).toMatchObject({ total_count: 3, has_more: true, count: 2 });
    for (const transaction of transactions.body.transactions)
      expect(transaction).toMatchObject({ subscription_id: sub.id, status: "completed" });
    const rest = await env.client.get(
      `/subscriptions/${sub.id}/transactions?order=asc&start_after=${transactions.body.transactions[1].id}`,
    );
    expect(rest.body.transactions).toHaveLength(1);
    const other = await createProject("Another");
    const stranger = api(local.url, other.sandbox);
    expect((await stranger.get(`/subscriptions/${sub.id}/transactions`)).status).toBe(404);
    expect((await stranger.get(`/subscriptions/${sub.id}/customers`)).status).toBe(404);
    expect((await stranger.get(`/subscriptions/${sub.id}/addons`)).status).toBe(404);
  });
});

describe("leap years", () => {
  it("prorates over February's 29 days in a leap year", async () => {
    const leap = (text: string) => text.replace(/^Y/, String(LEAP_YEAR));
    const env = await environment(leap("Y-02-01T00:00:00.000Z"));
    const sub = await subscribe(env, { amount: "29.00" });
    await advanceTo(env, leap("Y-02-20T00:00:00.000Z"));
    // 29.00 × 10 / 29 = 10.00 exactly: the period is 29 days long.
    const made = await env.client.post(`/subscriptions/${sub.id}/addons`, {
      name: "Seat",
      amount: "29.00",
      prorate: true,
    });
    expect(made.body.proration).toMatchObject({ amount: "10.00", name: "Seat × 1 added: 10 of 29 days" });
  });
});
