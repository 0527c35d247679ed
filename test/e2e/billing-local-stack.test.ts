import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceSteps, LEAP_YEAR } from "../support/calendar.ts";
import { type Receiver, startReceiver } from "../support/webhooks.ts";
import { clientLibrary, type Json, read } from "./client-library.ts";
import { api, type Client, type RunningStack, startStack } from "./harness.ts";

/**
 * Issue 22 against `npm start` over HTTP: coupons, add-ons and discounts called as the official
 * Python and PHP clients call them, unchanged (`../shared/reference/client-compatibility.md`), and a
 * subscription billed on the sandbox clock with a coupon, a prorated add-on and a prorated plan
 * upgrade, every renewal's amount and lines computed by hand here, each charged once, with its
 * webhooks. The stack has its own DynamoDB Local: on the shared one, other stacks' pollers would
 * race this one's for the events.
 */
let stack: RunningStack;
let receiver: Receiver;
let merchant: Client;

beforeAll(async () => {
  [receiver, stack] = await Promise.all([startReceiver("billing"), startStack({ dynamodb: "own" })]);
  merchant = api(stack.url, stack.credentials.sandbox);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const DAY = 24 * 3600 * 1000;
/** Each test takes a few seconds; a loaded machine (the webhooks waited for up to 20 s) may take more. */
const TEST_TIMEOUT_MS = 60_000;

/** What the clients send on each route (every key, null when unset). */
const COUPON_KEYS = [
  "id",
  "amount_off",
  "percent_off",
  "currency",
  "iteration_count",
  "max_redemptions",
  "expires_at",
  "metadata",
] as const;
const ADDON_KEYS = [
  "plan_id",
  "type",
  "name",
  "amount",
  "quantity",
  "metadata",
  "prorate",
  "proration_date",
  "preview",
] as const;
const ADDON_UPDATE_KEYS = [...ADDON_KEYS, "increment_quantity_by"] as const;
const DISCOUNT_KEYS = ["coupon_id", "name", "amount", "expires_at", "metadata"] as const;

/** A date of the clock scenario's calendar: `Y` is the first leap year after today's. */
const on = (text: string) => text.replace(/^Y/, String(LEAP_YEAR));

async function clockNow(client: Client): Promise<number> {
  return Date.parse((await client.get("/sandbox/clock")).body.clock.now);
}

async function advanceTo(client: Client, at: string) {
  const answer = await client.post("/sandbox/clock", { advance_to: at });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  for (const job of answer.body.jobs) expect(job.outcome, job.name).not.toMatch(/^failed/);
  expect(answer.body.jobs_remaining).toBe(0);
  return answer.body;
}

async function subscribe(client: Client, terms: Record<string, unknown>) {
  const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
  const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .body.card;
  const created = await client.post("/subscriptions", {
    customer_id: customer.id,
    source: card.id,
    ...terms,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.subscription as { id: string; customer_id: string };
}

/**
 * What a client sends back of a resource it read: Python all of it; PHP's `fillWithData` keeps no
 * empty value (`! empty`), so an empty dictionary or a null goes back as null.
 */
function asHeld(style: "python" | "php", fields: Record<string, unknown>) {
  if (style === "python") return fields;
  const empty = (value: unknown) =>
    value === null ||
    value === "" ||
    value === 0 ||
    value === false ||
    (typeof value === "object" && Object.keys(value).length === 0);
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => !empty(value)));
}

describe("coupons, add-ons and discounts on the local stack, as the Python and PHP clients call them", () => {
  for (const style of ["python", "php"] as const) {
    it(
      `serves the ${style} client's calls unchanged, each answer under the key it reads`,
      async () => {
        const client = clientLibrary(stack.url, style, stack.credentials.sandbox);
        const expiresAt = new Date((await clockNow(merchant)) + 30 * DAY).toISOString();

        // Coupons: every field of the reference's table.
        const amountOff = read(
          await client.post("/coupons", COUPON_KEYS, {
            id: `TENOFF-${style}`,
            amount_off: "10.00",
            currency: "EUR",
            iteration_count: 2,
            max_redemptions: 5,
            expires_at: expiresAt,
            metadata: { campaign: "spring" },
          }),
          "coupon",
        );
        expect(amountOff).toMatchObject({
          id: `TENOFF-${style}`,
          amount_off: "10.00",
          percent_off: null,
          currency: "EUR",
          iteration_count: 2,
          max_redemptions: 5,
          expires_at: expiresAt,
          metadata: { campaign: "spring" },
          redeemed_number: 0,
        });
        const percentOff = read(
          await client.post("/coupons", COUPON_KEYS, { id: `PCT15-${style}`, percent_off: "15" }),
          "coupon",
        );
        expect(percentOff).toMatchObject({ percent_off: "15", amount_off: null, iteration_count: null });
        expect(read(await client.list("/coupons"), "coupons").map((coupon: Json) => coupon.id)).toEqual(
          expect.arrayContaining([`TENOFF-${style}`, `PCT15-${style}`]),
        );
        expect(read(await client.get(`/coupons/TENOFF-${style}`), "coupon").amount_off).toBe("10.00");
        expect(
          read(
            await client.put(`/coupons/TENOFF-${style}`, ["metadata"], { metadata: { campaign: "summer" } }),
            "coupon",
          ).metadata,
        ).toEqual({ campaign: "summer" });
        read(await client.del(`/coupons/PCT15-${style}`));
        expect((await client.get(`/coupons/PCT15-${style}`)).body).toMatchObject({
          success: false,
          error_type: "resource.coupon.not-found",
        });

        // A subscription (its first renewal charged at once) and the plan an add-on can bill.
        const sub = await subscribe(merchant, {
          name: "Team",
          amount: "30.00",
          currency: "EUR",
          interval: "1m",
        });
        const path = `/subscriptions/${sub.id}`;
        expect(
          (
            await merchant.post("/plans", {
              id: `storage-${style}`,
              name: "Storage",
              amount: "5.00",
              currency: "EUR",
              interval: "1m",
            })
          ).status,
        ).toBe(200);

        // Add-ons: a preview answers under `addon` too, and makes nothing.
        const prorationDate = new Date(await clockNow(merchant)).toISOString();
        const seat = {
          type: "recurring",
          name: "Seat",
          amount: "4.00",
          quantity: 3,
          metadata: { team: "core" },
          prorate: true,
          proration_date: prorationDate,
        };
        const preview = read(await client.post(`${path}/addons`, ADDON_KEYS, { ...seat, preview: true }));
        expect(preview).toMatchObject({
          preview: true,
          addon: { name: "Seat", amount: "4.00", quantity: 3, subscription_id: sub.id },
          // 3 × 4.00 for the whole period but the few milliseconds since it began.
          proration: { amount: "12.00", from: prorationDate },
        });
        expect(read(await client.get(`${path}/addons`), "addons")).toEqual([]);
        const made = read(await client.post(`${path}/addons`, ADDON_KEYS, seat), "addon");
        expect(made).toMatchObject({
          type: "recurring",
          name: "Seat",
          amount: "4.00",
          quantity: 3,
          metadata: { team: "core" },
        });
        const storage = read(
          await client.post(`${path}/addons`, ADDON_KEYS, { plan_id: `storage-${style}` }),
          "addon",
        );
        expect(storage).toMatchObject({
          plan_id: `storage-${style}`,
          name: "Storage",
          amount: "5.00",
          quantity: 1,
          metadata: {},
        });
        // Lists are newest first unless asked otherwise.
        expect(read(await client.list(`${path}/addons`), "addons").map((addon: Json) => addon.id)).toEqual([
          storage.id,
          made.id,
        ]);
        // An update sends the add-on back as read (the current quantity among it) with the increment.
        const current = read(await client.get(`${path}/addons/${storage.id}`), "addon");
        const updated = read(
          await client.put(`${path}/addons/${storage.id}`, ADDON_UPDATE_KEYS, {
            ...asHeld(style, {
              plan_id: current.plan_id,
              type: current.type,
              name: current.name,
              amount: current.amount,
              quantity: current.quantity,
              metadata: current.metadata,
            }),
            increment_quantity_by: 2,
          }),
          "addon",
        );
        expect(updated).toMatchObject({ id: storage.id, quantity: 3, amount: "5.00", metadata: {} });
        // Python writes `prorate=False&proration_date=None&preview=None`; PHP leaves nulls out, `prorate=1`.
        const prorate = style === "php";
        const removed = read(
          await client.del(`${path}/addons/${made.id}`, { prorate, proration_date: null, preview: null }),
        );
        // Removed a moment into the period: 3 × 4.00 back, within a fraction of a cent.
        expect(removed.proration).toEqual(prorate ? expect.objectContaining({ amount: "-12.00" }) : null);
        expect(read(await client.get(`${path}/addons`), "addons").map((addon: Json) => addon.id)).toEqual([
          storage.id,
        ]);

        // Discounts: from a coupon (one redemption counted) and ad hoc.
        const fromCoupon = read(
          await client.post(`${path}/discounts`, DISCOUNT_KEYS, { coupon_id: `TENOFF-${style}` }),
          "discount",
        );
        expect(fromCoupon).toMatchObject({
          coupon_id: `TENOFF-${style}`,
          amount: "10.00",
          iteration_count: 2,
        });
        expect(read(await client.get(`/coupons/TENOFF-${style}`), "coupon").redeemed_number).toBe(1);
        const goodwill = read(
          await client.post(`${path}/discounts`, DISCOUNT_KEYS, {
            name: "Goodwill",
            amount: "2.50",
            expires_at: expiresAt,
            metadata: { reason: "outage" },
          }),
          "discount",
        );
        expect(goodwill).toMatchObject({
          coupon_id: null,
          name: "Goodwill",
          amount: "2.50",
          expires_at: expiresAt,
          metadata: { reason: "outage" },
        });
        expect(read(await client.list(`${path}/discounts`), "discounts").map((one: Json) => one.id)).toEqual([
          goodwill.id,
          fromCoupon.id,
        ]);
        expect(read(await client.get(`${path}/discounts/${goodwill.id}`), "discount").name).toBe("Goodwill");
        read(await client.del(`${path}/discounts/${goodwill.id}`));
        expect(read(await client.get(`${path}/discounts`), "discounts").map((one: Json) => one.id)).toEqual([
          fromCoupon.id,
        ]);

        // The subscription's customer and the transaction of its first renewal.
        expect(read(await client.get(`${path}/customers`), "customer").id).toBe(sub.customer_id);
        expect(read(await client.list(`${path}/transactions`), "transactions")).toEqual([
          expect.objectContaining({ subscription_id: sub.id, status: "completed", amount: "30.00" }),
        ]);
      },
      TEST_TIMEOUT_MS,
    );
  }
});

interface Line {
  type: string;
  name: string;
  amount: string;
  quantity: number;
}

/** The subscription's renewal invoices, oldest first: iteration, amount, lines as the invoice details them. */
async function renewalInvoices(client: Client, subscriptionId: string) {
  const { body } = await client.get("/invoices?limit=100&order=asc");
  return body.invoices
    .filter((invoice: Json) => invoice.subscription_id === subscriptionId)
    .map((invoice: Json) => ({
      id: invoice.id as string,
      iteration: Number(invoice.metadata.subscription_iteration),
      amount: invoice.amount as string,
      lines: invoice.details.map(({ type, name, amount, quantity }: Line) => ({
        type,
        name,
        amount,
        quantity,
      })),
    }));
}

/** The events delivered to the receiver so far, read back by id as the spec says, in delivery order. */
async function deliveredEvents(client: Client) {
  return Promise.all(
    receiver.requests.map(
      async (request) => (await client.get(`/events/${JSON.parse(request.body).event_id}`)).body.event,
    ),
  );
}

describe("a subscription billed on the local stack's sandbox clock", () => {
  it(
    "charges a 20 % coupon for 3 renewals, a prorated add-on and a prorated upgrade, each renewal once, with its webhooks",
    async () => {
      // A project of its own (a supervised one: one request, where `npm run project` is a process to
      // start): its own clock, with nothing else due on it, and its own webhooks.
      const child = read(await merchant.post("/supervised-projects", { name: "Billing" }), "project");
      expect(child).toMatchObject({ sandbox: true, private_key: expect.any(String) });
      const billing = api(stack.url, { project_id: child.id, private_key: child.private_key });
      expect((await billing.put(`/projects/${child.id}`, { webhook_url: receiver.url })).status).toBe(200);
      // The clock's subscription jobs, as each advance reports them.
      const renewalJobs: Array<{ name: string; outcome: string }> = [];
      const advance = async (at: string) => {
        for (const job of (await advanceTo(billing, at)).jobs)
          if (job.kind === "subscription") renewalJobs.push(job);
      };
      // A known calendar (ahead of the real date, as an advance must be): the first leap year after
      // today's (`test/support/calendar.ts`), whose January has 31 days and February 29.
      const now = new Date((await billing.get("/sandbox/clock")).body.clock.now);
      for (const step of advanceSteps(now, new Date(on("Y-01-01T00:00:00.000Z")))) await advance(step);
      for (const plan of [
        { id: "basic", name: "Basic", amount: "30.00" },
        { id: "pro", name: "Pro", amount: "60.00" },
      ])
        expect((await billing.post("/plans", { ...plan, currency: "EUR", interval: "1m" })).status).toBe(200);
      expect(
        (await billing.post("/coupons", { id: "WELCOME20", percent_off: "20", iteration_count: 3 })).status,
      ).toBe(200);

      // Renewal 1, January, charged at once: the plan alone. The periods start at the creation's
      // millisecond, a few milliseconds after midnight: every date below keeps clear of them.
      const sub = await subscribe(billing, { plan_id: "basic" });
      const coupon = await billing.post(`/subscriptions/${sub.id}/discounts`, { coupon_id: "WELCOME20" });
      expect(coupon.status, JSON.stringify(coupon.body)).toBe(200);

      // Two seats from January 11: 2 × 10.00 for 21 of January's 31 days = 13.548… → 13.55.
      await advance(on("Y-01-11T00:00:00.000Z"));
      const addon = await billing.post(`/subscriptions/${sub.id}/addons`, {
        name: "Seat",
        amount: "10.00",
        quantity: 2,
        prorate: true,
        proration_date: on("Y-01-11T00:00:00.000Z"),
      });
      expect(addon.status, JSON.stringify(addon.body)).toBe(200);
      expect(addon.body.proration).toMatchObject({ amount: "13.55", from: on("Y-01-11T00:00:00.000Z") });

      // Renewal 2 runs on the way (February 1). Upgraded on February 15: 60.00 − 30.00 for 15 of
      // February's 29 days = 15.517… (less the 0.0016… carried from the first proration) → 15.52.
      await advance(on("Y-02-15T00:00:00.000Z"));
      const upgrade = await billing.put(`/subscriptions/${sub.id}`, {
        plan_id: "pro",
        prorate: true,
        proration_date: on("Y-02-15T00:00:00.000Z"),
      });
      expect(upgrade.status, JSON.stringify(upgrade.body)).toBe(200);
      expect(upgrade.body).toMatchObject({
        subscription: { plan_id: "pro", amount: "60.00" },
        proration: { amount: "15.52", from: on("Y-02-15T00:00:00.000Z") },
      });

      // Renewals 3, 4 and 5 (March, April, May 1).
      await advance(on("Y-05-01T00:01:00.000Z"));

      const plan = (name: string, amount: string) => ({ type: "plan", name, amount, quantity: 1 });
      const seats = { type: "addon", name: "Seat", amount: "10.00", quantity: 2 };
      const welcome = (amount: string) => ({ type: "discount", name: "WELCOME20", amount, quantity: 1 });
      const proration = (name: string, amount: string) => ({ type: "proration", name, amount, quantity: 1 });
      const expected = [
        // January: 30.00.
        { iteration: 1, amount: "30.00", lines: [plan("Basic", "30.00")] },
        // February: 30.00 + 20.00 = 50.00, less 20 % (10.00) = 40.00, plus the seats' 13.55.
        {
          iteration: 2,
          amount: "53.55",
          lines: [
            plan("Basic", "30.00"),
            seats,
            welcome("10.00"),
            proration("Seat × 2 added: 21 of 31 days", "13.55"),
          ],
        },
        // March: 60.00 + 20.00 = 80.00, less 20 % (16.00) = 64.00, plus the upgrade's 15.52.
        {
          iteration: 3,
          amount: "79.52",
          lines: [
            plan("Pro", "60.00"),
            seats,
            welcome("16.00"),
            proration("Basic → Pro: 15 of 29 days", "15.52"),
          ],
        },
        // April: 80.00 less 20 % = 64.00, the coupon's third and last renewal.
        { iteration: 4, amount: "64.00", lines: [plan("Pro", "60.00"), seats, welcome("16.00")] },
        // May: 80.00, no discount left.
        { iteration: 5, amount: "80.00", lines: [plan("Pro", "60.00"), seats] },
      ];
      const invoices = await renewalInvoices(billing, sub.id);
      expect(invoices.map(({ id, ...renewal }: Json) => renewal)).toEqual(expected);

      // Each renewal charged once: one completed transaction per invoice, for its amount.
      const transactions = (await billing.get(`/subscriptions/${sub.id}/transactions?limit=100&order=asc`))
        .body.transactions;
      expect(
        transactions.map((transaction: Json) => [
          transaction.invoice_id,
          transaction.status,
          transaction.amount,
        ]),
      ).toEqual(invoices.map((invoice: Json) => [invoice.id, "completed", invoice.amount]));
      expect((await billing.get(`/subscriptions/${sub.id}`)).body.subscription).toMatchObject({
        iterations: 5,
        current_period_start: expect.stringMatching(
          new RegExp(`^${LEAP_YEAR}-05-01T00:00:\\d{2}\\.\\d{3}Z$`),
        ),
        credit_balance: "0.00",
      });
      // The clock ran renewals 2 to 5, each once (the first was charged with the creation).
      expect(renewalJobs.filter((job) => job.outcome === "charged")).toHaveLength(4);
      expect(new Set(renewalJobs.map((job) => job.name)).size).toBe(renewalJobs.length);
      // The coupon used up, its discount is gone.
      expect((await billing.get(`/subscriptions/${sub.id}/discounts`)).body.discounts).toEqual([]);

      // Its webhooks: each event delivered once, the renewals' with their charge lines (signed).
      const names = [
        "subscription.created",
        "subscription.started",
        "subscription.discount.created",
        "subscription.addon.created",
        "subscription.updated",
        ...expected.map(() => "subscription.iterated"),
      ];
      const ofSubscription = (events: Json[]) =>
        events.filter(
          (event) => event.name.startsWith("subscription.") && event.data.subscription?.id === sub.id,
        );
      const deadline = Date.now() + 20_000;
      while (ofSubscription(await deliveredEvents(billing)).length < names.length && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 200));
      // Late duplicates would arrive within this pause.
      await new Promise((done) => setTimeout(done, 500));
      const delivered = ofSubscription(await deliveredEvents(billing));
      expect(delivered.map((event) => event.name).sort()).toEqual([...names].sort());
      expect(new Set(delivered.map((event) => event.id)).size).toBe(delivered.length);

      const byName = (name: string) => delivered.filter((event) => event.name === name);
      expect(byName("subscription.discount.created")[0].data.discount).toMatchObject({
        coupon_id: "WELCOME20",
        percent_off: "20",
        iteration_count: 3,
      });
      expect(byName("subscription.addon.created")[0].data).toMatchObject({
        addon: { name: "Seat", amount: "10.00", quantity: 2 },
        proration: { amount: "13.55" },
      });
      expect(byName("subscription.updated")[0].data).toMatchObject({
        subscription: { plan_id: "pro" },
        proration: { amount: "15.52", name: "Basic → Pro: 15 of 29 days" },
      });
      // A charge's lines are signed, and an add-on's counts all its quantity.
      const signed = (line: Line) => ({
        ...line,
        amount:
          line.type === "discount"
            ? `-${line.amount}`
            : line.type === "addon"
              ? (Number(line.amount) * line.quantity).toFixed(2)
              : line.amount,
      });
      const iterated = byName("subscription.iterated").sort(
        (a, b) => a.data.charge.iteration - b.data.charge.iteration,
      );
      expect(
        iterated.map((event) => ({
          iteration: event.data.charge.iteration,
          amount: event.data.charge.amount,
          lines: event.data.charge.lines.map(({ type, name, amount, quantity }: Line) => ({
            type,
            name,
            amount,
            quantity,
          })),
          invoice: event.data.invoice.id,
          transaction: event.data.transaction.status,
        })),
      ).toEqual(
        expected.map((renewal, index) => ({
          iteration: renewal.iteration,
          amount: renewal.amount,
          lines: renewal.lines.map(signed),
          invoice: invoices[index].id,
          transaction: "completed",
        })),
      );
    },
    TEST_TIMEOUT_MS,
  );
});
