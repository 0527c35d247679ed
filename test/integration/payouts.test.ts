import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import Big from "big.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { handler as dailyCloseHandler } from "../../functions/jobs/daily-close.ts";
import { lambdaContext } from "../../lib/local/lambda.ts";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { allPayoutItems, linesOfDay } from "../../shared/payouts/store.ts";
import { createProject } from "../../shared/projects/project.ts";
import { dailyCloseScheduleName, type ScheduleRequest } from "../../shared/scheduling/port.ts";
import { tableScheduler } from "../../shared/scheduling/table.ts";
import { type StripeDouble, startStripeDouble } from "../doubles/stripe.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { recordedEvents } from "../support/events.ts";
import { providerEnvironment } from "../support/gateways.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 21: the sandbox gateway pays out daily, on the sandbox clock, what it settled that day: a
 * payout per configuration and currency whose items match the transactions to the cent, with fees
 * broken down (interchange, scheme, markup, the gateway's fixed fee) that sum exactly; reconciled;
 * made once however often the close runs, and never again once deleted.
 */
const local = useInProcessApi("Payouts test");

afterEach(() => {
  vi.restoreAllMocks();
});

const DAY = 24 * 3600 * 1000;
const CREDIT = "4242424242424242";
const DEBIT = "4000056655665556";
const CHARGED_BACK = "4000000000000069";

// biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
type Json = any;

interface Environment {
  client: Client;
  scope: string;
  credentials: { project_id: string; private_key: string };
}

async function environment(): Promise<Environment> {
  const project = await createProject("Payouts");
  return {
    client: api(local.url, project.sandbox),
    scope: project.sandbox.project_id,
    credentials: project.sandbox,
  };
}

/** Moves the environment's clock to `hour` o'clock of the day after its current day; that day. */
async function nextDayAt(env: Environment, hour: number): Promise<string> {
  const now = Date.parse((await env.client.get("/sandbox/clock")).body.clock.now);
  const day = new Date(now + DAY).toISOString().slice(0, 10);
  await advanceTo(env, `${day}T${String(hour).padStart(2, "0")}:00:00.000Z`);
  return day;
}

async function advanceTo(env: Environment, at: string): Promise<Json> {
  const moved = await env.client.post("/sandbox/clock", { advance_to: at });
  expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  return moved.body;
}

/** Midnight after `day` and a minute: the day's close is due at midnight. */
const pastMidnight = (day: string) => new Date(Date.parse(`${day}T00:01:00.000Z`) + DAY).toISOString();

/** An invoice of `amount` paid and captured with the card `number`: its transaction. */
async function pay(env: Environment, amount: string, number: string, currency = "EUR"): Promise<Json> {
  const card = (await env.client.post("/cards", { number, exp_month: 12, exp_year: 2099 })).body.card;
  const invoice = (await env.client.post("/invoices", { name: "Order", amount, currency })).body.invoice;
  const captured = await env.client.post(`/invoices/${invoice.id}/capture`, { source: card.id });
  expect(captured.status, JSON.stringify(captured.body)).toBe(200);
  expect(captured.body.transaction.status).toBe("completed");
  return captured.body.transaction;
}

async function refund(env: Environment, transaction: Json, amount: string): Promise<Json> {
  const refunded = await env.client.post(`/invoices/${transaction.invoice_id}/refunds`, { amount });
  expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
  return refunded.body.refund;
}

async function payouts(env: Environment): Promise<Json[]> {
  const listed = await env.client.get("/payouts?limit=100");
  expect(listed.status).toBe(200);
  return listed.body.payouts;
}

async function itemsOf(env: { client: Client }, payoutId: string): Promise<Json[]> {
  const listed = await env.client.get(`/payouts/${payoutId}/items?limit=100&order=asc`);
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return listed.body.items;
}

const close = (scope: string, day: string) =>
  dailyCloseHandler({ kind: "daily-close", scope, day }, lambdaContext("jobs/daily-close", 300_000));

const sum = (amounts: string[]) =>
  amounts.reduce((total, amount) => total.plus(amount), new Big(0)).toFixed(2);

const feeParts = (item: Json) => [
  item.breakdown.scheme_fee,
  item.breakdown.interchange_fee,
  item.breakdown.gateway_fee,
  item.breakdown.markup_fee,
  item.breakdown.acquirer_fee,
  item.breakdown.other_fee,
];

describe("payouts of the sandbox gateway", () => {
  it("pay out a day's captures and refunds at midnight, per currency, items matching the transactions to the cent", async () => {
    const env = await environment();
    const day = await nextDayAt(env, 9);
    const small = await pay(env, "19.99", CREDIT);
    const large = await pay(env, "250.00", DEBIT);
    const dollars = await pay(env, "10.00", CREDIT, "USD");
    const partial = await refund(env, large, "40.00");
    expect(await payouts(env)).toEqual([]);
    // The day's close was scheduled by the first capture, once, named by the environment and the day,
    // due at midnight on the environment's clock; the local scheduler fires it (it is in its listing).
    const scheduled = async () =>
      (
        await dynamo.send(
          new GetCommand({
            TableName: config.tableName,
            Key: keys.scheduledJob(dailyCloseScheduleName(env.scope, day)),
          }),
        )
      ).Item;
    expect(await scheduled()).toMatchObject({
      name: `close-${env.scope}-${day}`,
      due_at: new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString(),
      job: { kind: "daily-close", scope: env.scope, day },
      gsi1pk: "scheduled-jobs#waiting",
    });

    const moved = await advanceTo(env, pastMidnight(day));
    expect(moved.jobs).toContainEqual(
      expect.objectContaining({
        kind: "daily-close",
        due_at: new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString(),
      }),
    );
    expect(moved.jobs_remaining).toBe(0);
    expect(await scheduled()).toBeUndefined();

    const made = await payouts(env);
    expect(made).toHaveLength(2);
    const euros = made.find((payout: Json) => payout.currency === "EUR");
    expect(euros).toEqual({
      id: expect.stringMatching(/^po_[0-9A-HJKMNP-TV-Z]{26}$/),
      project_id: env.scope,
      status: "paid",
      // 269.99 of sales, less 40.00 refunded and 1.24 of fees.
      amount: "228.75",
      currency: "EUR",
      metadata: {},
      bank_name: "Sandbox Bank",
      bank_summary: `SANDBOX PAYOUT ${day}`,
      sales_transactions: 2,
      sales_volume: "269.99",
      refunds_transactions: 1,
      refunds_volume: "40.00",
      chargebacks_transactions: 0,
      chargebacks_volume: "0.00",
      fees: "1.24",
      adjustments: "0.00",
      reserve: "0.00",
      settled_at: new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString(),
      created_at: expect.any(String),
      gateway_configuration_id: small.gateway_configuration_id,
      gateway_resource_id: `sandbox-payout-${day}`,
      reconciliation: {
        status: "matched",
        checked_at: expect.any(String),
        unmatched_items: 0,
        unpaid_transactions: [],
      },
    });
    expect((await env.client.get(`/payouts/${euros.id}`)).body.payout).toEqual(euros);

    const items = await itemsOf(env, euros.id);
    const byTransaction = (id: string, type: string) =>
      items.find((item: Json) => item.transaction_id === id && item.type === type);
    // 19.99 on a credit card: interchange 0.30 % (0.05997), scheme 0.04 % (0.007996), markup 0.10 %
    // (0.01999), each rounded half up, and the fixed 0.10.
    expect(byTransaction(small.id, "sale")).toEqual({
      id: expect.stringMatching(/^poi_[0-9A-HJKMNP-TV-Z]{26}$/),
      project_id: env.scope,
      payout_id: euros.id,
      transaction_id: small.id,
      type: "sale",
      gateway_resource_id: expect.any(String),
      amount: "19.99",
      fees: "0.19",
      metadata: expect.objectContaining({ invoice_id: small.invoice_id }),
      created_at: expect.any(String),
      breakdown: {
        scheme_fee: "0.01",
        interchange_fee: "0.06",
        gateway_fee: "0.10",
        markup_fee: "0.02",
        acquirer_fee: "0.00",
        other_fee: "0.00",
      },
      reconciled: true,
      mismatch: null,
    });
    // A debit card pays 0.20 % of interchange.
    expect(byTransaction(large.id, "sale")).toMatchObject({
      amount: "250.00",
      fees: "0.95",
      breakdown: { interchange_fee: "0.50", scheme_fee: "0.10", markup_fee: "0.25", gateway_fee: "0.10" },
    });
    expect(byTransaction(large.id, "refund")).toMatchObject({
      amount: "-40.00",
      fees: "0.10",
      metadata: expect.objectContaining({ refund_id: partial.id }),
      breakdown: { gateway_fee: "0.10", interchange_fee: "0.00" },
    });
    expect(items).toHaveLength(3);
    for (const item of items) expect(sum(feeParts(item))).toBe(item.fees);
    expect(sum(items.map((item: Json) => item.fees))).toBe(euros.fees);
    expect(sum([...items.map((item: Json) => item.amount), `-${euros.fees}`])).toBe(euros.amount);
    // Each item is the transaction's settled amount, to the cent, as the transactions say.
    for (const item of items) {
      const transaction = (await env.client.get(`/transactions/${item.transaction_id}`)).body.transaction;
      const settled =
        item.type === "sale"
          ? transaction.captured_amount
          : `-${transaction.refunds.find((found: Json) => found.id === item.metadata.refund_id).amount}`;
      expect(item.amount).toBe(settled);
    }

    const usd = made.find((payout: Json) => payout.currency === "USD");
    expect(usd).toMatchObject({ amount: "9.86", fees: "0.14", sales_volume: "10.00", sales_transactions: 1 });
    expect((await itemsOf(env, usd.id)).map((item: Json) => item.transaction_id)).toEqual([dollars.id]);

    const events = (await recordedEvents(env.scope)).filter((event) => event.name === "payout.created");
    expect(events.map((event) => (event.data as Json).payout.id).sort()).toEqual([euros.id, usd.id].sort());
  });

  it("pay out a negative amount on a day whose refunds and chargebacks exceed its sales", async () => {
    const env = await environment();
    const first = await nextDayAt(env, 9);
    const earlier = await pay(env, "19.99", CREDIT);
    await advanceTo(env, pastMidnight(first));
    const day = new Date(Date.parse(`${first}T00:00:00Z`) + DAY).toISOString().slice(0, 10);
    await advanceTo(env, `${day}T10:00:00.000Z`);
    await refund(env, earlier, "19.99");
    const disputed = await pay(env, "30.00", CHARGED_BACK);
    expect(disputed.chargedback).toBe(true);
    await advanceTo(env, pastMidnight(day));

    const ofDay = (await payouts(env)).find(
      (payout: Json) => payout.bank_summary === `SANDBOX PAYOUT ${day}`,
    );
    // 30.00 sold, 19.99 refunded, 30.00 charged back; fees 0.10 + 0.23 + 15.00.
    expect(ofDay).toMatchObject({
      amount: "-35.32",
      sales_transactions: 1,
      sales_volume: "30.00",
      refunds_transactions: 1,
      refunds_volume: "19.99",
      chargebacks_transactions: 1,
      chargebacks_volume: "30.00",
      fees: "15.33",
      reconciliation: { status: "matched" },
    });
    const items = await itemsOf(env, ofDay.id);
    expect(items.find((item: Json) => item.type === "chargeback")).toMatchObject({
      transaction_id: disputed.id,
      amount: "-30.00",
      fees: "15.00",
      breakdown: { other_fee: "15.00" },
      reconciled: true,
    });
    expect(sum([...items.map((item: Json) => item.amount), `-${ofDay.fees}`])).toBe(ofDay.amount);
  });

  it("make the same payouts however often the close runs, and complete a close cut off half-way", async () => {
    const env = await environment();
    const day = await nextDayAt(env, 9);
    await pay(env, "12.34", CREDIT);
    await pay(env, "5.00", CREDIT, "GBP");

    // The first run fails at the payout's write, after its items were written.
    const send = dynamo.send.bind(dynamo);
    let failed = false;
    vi.spyOn(dynamo, "send").mockImplementation(((command: unknown) => {
      const isPayoutWrite =
        command instanceof TransactWriteCommand &&
        command.input.TransactItems?.some((item) => item.Put?.Item?.type === "payout");
      if (isPayoutWrite && !failed) {
        failed = true;
        return Promise.reject(new Error("injected fault"));
      }
      return send(command as never);
    }) as typeof dynamo.send);
    const cut = await advanceTo(env, pastMidnight(day));
    expect(cut.jobs).toContainEqual(
      expect.objectContaining({ kind: "daily-close", outcome: expect.stringMatching(/^failed/) }),
    );
    expect(cut.jobs_remaining).toBe(1);
    vi.restoreAllMocks();

    const resumed = await advanceTo(env, pastMidnight(day));
    expect(resumed.jobs).toContainEqual(expect.objectContaining({ kind: "daily-close" }));
    const made = await payouts(env);
    expect(made).toHaveLength(2);
    const itemsBefore = await Promise.all(made.map((payout: Json) => itemsOf(env, payout.id)));
    expect(itemsBefore.map((items) => items.length)).toEqual([1, 1]);

    // Run twice more, late: nothing new.
    await close(env.scope, day);
    await close(env.scope, day);
    const again = await payouts(env);
    expect(again).toEqual(made);
    expect(await Promise.all(again.map((payout: Json) => itemsOf(env, payout.id)))).toEqual(itemsBefore);
    const created = (await recordedEvents(env.scope)).filter((event) => event.name === "payout.created");
    expect(created).toHaveLength(2);
    expect((await env.client.get("/payouts")).body.total_count).toBe(2);
  });

  it("delete a payout with its items, for good: a close run again does not make it anew", async () => {
    const env = await environment();
    const day = await nextDayAt(env, 9);
    await pay(env, "7.00", CREDIT);
    await pay(env, "8.00", CREDIT);
    await advanceTo(env, pastMidnight(day));
    const [payout] = await payouts(env);
    expect(await itemsOf(env, payout.id)).toHaveLength(2);

    const deleted = await env.client.del(`/payouts/${payout.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await env.client.get(`/payouts/${payout.id}`)).status).toBe(404);
    const items = await env.client.get(`/payouts/${payout.id}/items`);
    expect(items.status).toBe(404);
    expect(items.body.error_type).toBe("resource.payout.not-found");
    expect((await env.client.del(`/payouts/${payout.id}`)).status).toBe(404);
    // The items are gone from the table, not only from the API.
    expect(await allPayoutItems(env.scope, payout.id)).toEqual([]);
    const listed = await env.client.get("/payouts");
    expect(listed.body).toMatchObject({ payouts: [], total_count: 0, has_more: false });

    expect((await close(env.scope, day)).outcome).toMatch(/0 created, 0 existing, 1 deleted/);
    expect((await env.client.get(`/payouts/${payout.id}`)).status).toBe(404);
    const events = (await recordedEvents(env.scope)).map((event) => event.name);
    expect(events.filter((name) => name === "payout.deleted")).toHaveLength(1);
  });

  it("record each settled movement in the very transaction that settles it, and nothing for what moved no money", async () => {
    const env = await environment();
    const day = await nextDayAt(env, 9);
    const send = dynamo.send.bind(dynamo);
    const writes: Array<Array<Record<string, unknown>>> = [];
    vi.spyOn(dynamo, "send").mockImplementation(((command: unknown) => {
      if (command instanceof TransactWriteCommand) {
        writes.push(
          (command.input.TransactItems ?? []).flatMap((item) => (item.Put?.Item ? [item.Put.Item] : [])),
        );
      }
      return send(command as never);
    }) as typeof dynamo.send);
    const schedule = tableScheduler.schedule.bind(tableScheduler);
    const closes: ScheduleRequest[] = [];
    vi.spyOn(tableScheduler, "schedule").mockImplementation(async (request, fireAt) => {
      if (request.job.kind === "daily-close") closes.push(request);
      return schedule(request, fireAt);
    });
    const paid = await pay(env, "11.00", CREDIT);
    await refund(env, paid, "1.00");
    // An authorization voided: no money moved.
    const card = (await env.client.post("/cards", { number: CREDIT, exp_month: 12, exp_year: 2099 })).body
      .card;
    const invoice = (await env.client.post("/invoices", { name: "Held", amount: "5.00", currency: "EUR" }))
      .body.invoice;
    await env.client.post(`/invoices/${invoice.id}/authorize`, { source: card.id });
    expect((await env.client.post(`/invoices/${invoice.id}/void`, {})).status).toBe(200);
    vi.restoreAllMocks();
    // Two settlements of the day, one scheduler call for its close (this container remembers it).
    expect(closes.filter((request) => request.job.scope === env.scope)).toEqual([
      expect.objectContaining({ name: dailyCloseScheduleName(env.scope, day) }),
    ]);

    const withLines = writes.filter((items) => items.some((item) => item.type === "settlement-line"));
    expect(withLines).toHaveLength(2);
    for (const items of withLines) {
      // The transaction's own settlement is in the same write as its line.
      expect(items).toContainEqual(expect.objectContaining({ type: "transaction", id: paid.id }));
    }
    expect(withLines.map((items) => items.find((item) => item.type === "settlement-line"))).toEqual([
      expect.objectContaining({ movement: "sale", amount: "11.00", transaction_id: paid.id, day }),
      expect.objectContaining({ movement: "refund", amount: "1.00", transaction_id: paid.id, day }),
    ]);
  });

  it("flag an item whose amount differs from its transaction's, and a settled transaction no payout contains", async () => {
    const env = await environment();
    const day = await nextDayAt(env, 9);
    const paid = await pay(env, "25.00", CREDIT);
    const other = await pay(env, "6.00", CREDIT);
    // The gateway's record of the first says another amount than the transaction settled.
    const wrong = (await linesOfDay(env.scope, day)).find((line) => line.transaction_id === paid.id);
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.settlementLine(env.scope, day, String(wrong?.id)),
        UpdateExpression: "SET amount = :amount",
        ExpressionAttributeValues: { ":amount": "24.00" },
      }),
    );
    await advanceTo(env, pastMidnight(day));
    const [payout] = await payouts(env);
    expect(payout.reconciliation).toMatchObject({
      status: "mismatched",
      unmatched_items: 1,
      unpaid_transactions: [],
    });
    const items = await itemsOf(env, payout.id);
    expect(items.find((item: Json) => item.transaction_id === paid.id)).toMatchObject({
      amount: "24.00",
      reconciled: false,
      mismatch: "the transaction captured 25.00, the item 24.00",
    });
    expect(items.find((item: Json) => item.transaction_id === other.id)).toMatchObject({ reconciled: true });

    // A movement recorded under the day after it closed (a container whose view of the clock was late):
    // never paid twice nor silently lost, the close run again reports it.
    const late = await pay(env, "9.00", CREDIT);
    const [lateLine] = await linesOfDay(env.scope, pastMidnight(day).slice(0, 10));
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: {
          ...keys.settlementLine(env.scope, day, String(lateLine?.id)),
          type: "settlement-line",
          ...lateLine,
          day,
        },
      }),
    );
    expect(lateLine?.transaction_id).toBe(late.id);
    await close(env.scope, day);
    const rechecked = (await env.client.get(`/payouts/${payout.id}`)).body.payout;
    expect(rechecked.reconciliation).toMatchObject({ status: "mismatched", unpaid_transactions: [late.id] });
    expect(rechecked.amount).toBe(payout.amount);
    expect(await itemsOf(env, payout.id)).toHaveLength(2);
  });

  it("pay out a day whose close was never scheduled with a later day's close", async () => {
    const env = await environment();
    const lost = await nextDayAt(env, 9);
    const forgotten = await pay(env, "13.00", CREDIT);
    // The only scheduler call of that day is lost (a failed call, no other settlement that day).
    await dynamo.send(
      new DeleteCommand({
        TableName: config.tableName,
        Key: keys.scheduledJob(dailyCloseScheduleName(env.scope, lost)),
      }),
    );
    await advanceTo(env, pastMidnight(lost));
    expect(await payouts(env)).toEqual([]);

    const next = pastMidnight(lost).slice(0, 10);
    await advanceTo(env, `${next}T09:00:00.000Z`);
    const later = await pay(env, "2.00", CREDIT);
    const moved = await advanceTo(env, pastMidnight(next));
    expect(moved.jobs).toContainEqual(
      expect.objectContaining({
        kind: "daily-close",
        outcome: expect.stringMatching(/earlier days: 1 made$/),
      }),
    );
    const made = await payouts(env);
    expect(made.map((payout: Json) => payout.bank_summary).sort()).toEqual(
      [`SANDBOX PAYOUT ${lost}`, `SANDBOX PAYOUT ${next}`].sort(),
    );
    const ofLost = made.find((payout: Json) => payout.bank_summary === `SANDBOX PAYOUT ${lost}`);
    expect((await itemsOf(env, ofLost.id)).map((item: Json) => item.transaction_id)).toEqual([forgotten.id]);
    const ofNext = made.find((payout: Json) => payout.bank_summary === `SANDBOX PAYOUT ${next}`);
    expect((await itemsOf(env, ofNext.id)).map((item: Json) => item.transaction_id)).toEqual([later.id]);
    // Closed once: the next close leaves it as it is.
    expect((await close(env.scope, next)).outcome).toMatch(/0 created, 1 existing.*earlier days: 0 made$/);
  });

  it("keep each project's payouts to itself", async () => {
    const env = await environment();
    const other = await environment();
    const day = await nextDayAt(env, 9);
    await pay(env, "3.00", CREDIT);
    await advanceTo(env, pastMidnight(day));
    const [payout] = await payouts(env);

    for (const response of [
      await other.client.get(`/payouts/${payout.id}`),
      await other.client.get(`/payouts/${payout.id}/items`),
      await other.client.del(`/payouts/${payout.id}`),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.error_type).toBe("resource.payout.not-found");
    }
    expect((await other.client.get("/payouts")).body).toMatchObject({ payouts: [], total_count: 0 });
    // The live environment of the same project sees none either.
    const live = await local.live.get(`/payouts/${payout.id}`);
    expect(live.status).toBe(404);
    expect((await env.client.get(`/payouts/${payout.id}`)).status).toBe(200);
    // A malformed id is the 404 of an unknown one.
    expect((await env.client.get("/payouts/po_nope")).body.error_type).toBe("resource.payout.not-found");
  });

  it("list payouts and items a page at a time, with the usual listing", async () => {
    const env = await environment();
    let day = await nextDayAt(env, 9);
    const days: string[] = [];
    for (let index = 0; index < 3; index++) {
      await pay(env, "1.00", CREDIT);
      await pay(env, "2.00", CREDIT);
      await pay(env, "3.00", CREDIT);
      days.push(day);
      await advanceTo(env, pastMidnight(day));
      day = new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString().slice(0, 10);
      await advanceTo(env, `${day}T09:00:00.000Z`);
    }
    const first = await env.client.get("/payouts?limit=2");
    expect(first.body).toMatchObject({ count: 2, has_more: true, total_count: 3, limit: 2, order: "desc" });
    // Newest first: the payouts of the days in reverse.
    expect(first.body.payouts.map((payout: Json) => payout.bank_summary)).toEqual(
      [days[2], days[1]].map((one) => `SANDBOX PAYOUT ${one}`),
    );
    const rest = await env.client.get(`/payouts?limit=2&start_after=${first.body.payouts[1].id}`);
    expect(rest.body).toMatchObject({ count: 1, has_more: false });
    expect(rest.body.payouts[0].bank_summary).toBe(`SANDBOX PAYOUT ${days[0]}`);
    const back = await env.client.get(`/payouts?limit=1&end_before=${rest.body.payouts[0].id}`);
    expect(back.body.payouts.map((payout: Json) => payout.id)).toEqual([first.body.payouts[1].id]);

    const payout = first.body.payouts[0];
    const all = await itemsOf(env, payout.id);
    expect(all.map((item: Json) => item.amount)).toEqual(["1.00", "2.00", "3.00"]);
    const page1 = await env.client.get(`/payouts/${payout.id}/items?limit=2&order=asc`);
    expect(page1.body).toMatchObject({ count: 2, has_more: true, total_count: 3 });
    const page2 = await env.client.get(
      `/payouts/${payout.id}/items?limit=2&order=asc&start_after=${page1.body.items[1].id}`,
    );
    expect(page2.body).toMatchObject({ count: 1, has_more: false, total_count: 3 });
    expect([...page1.body.items, ...page2.body.items]).toEqual(all);
    const descending = await env.client.get(`/payouts/${payout.id}/items?limit=10`);
    expect(descending.body.items).toEqual([...all].reverse());
    const before = await env.client.get(
      `/payouts/${payout.id}/items?limit=1&order=asc&end_before=${all[2].id}`,
    );
    expect(before.body.items).toEqual([all[1]]);
    expect((await env.client.get("/payouts?limit=abc")).status).toBe(400);
    expect((await env.client.get("/payouts?start_after=tr_x")).body.invalid_fields[0].name).toBe(
      "start_after",
    );
  });

  it("answer the official clients' requests as they send them", async () => {
    const env = await environment();
    const day = await nextDayAt(env, 9);
    await pay(env, "4.20", CREDIT);
    await advanceTo(env, pastMidnight(day));
    const [payout] = await payouts(env);
    const raw = async (method: string, target: string, body?: string) => {
      const answer = await sendRaw(local.url, {
        method,
        target,
        headers: {
          authorization: basicAuthorization(env.credentials.project_id, env.credentials.private_key),
          "user-agent": "client-library/1.0",
          accept: "*/*",
          "api-version": "1.4.0.0",
          ...(body ? { "content-type": "application/json" } : {}),
        },
        ...(body ? { body } : {}),
      });
      return { status: answer.status, body: JSON.parse(answer.text) as Json };
    };
    // Every list option, empty (one library), `None` (Python), bare.
    for (const target of [
      "/payouts?expand=&filter=&limit=0&end_before=&start_after=",
      "/payouts?expand=None&filter=None&limit=None&end_before=None&start_after=None",
      "/payouts?&filter&limit=",
    ]) {
      const listed = await raw("GET", target);
      expect(listed.status, target).toBe(200);
      expect(listed.body).toMatchObject({
        success: true,
        payouts: [expect.objectContaining({ id: payout.id })],
      });
    }
    const items = await raw(
      "GET",
      `/payouts/${payout.id}/items?expand=&filter=&limit=0&end_before=&start_after=`,
    );
    expect(items.status).toBe(200);
    expect(items.body).toMatchObject({
      success: true,
      items: [expect.objectContaining({ payout_id: payout.id })],
    });
    expect(items.body).not.toHaveProperty("payout_items");
    const got = await raw("GET", `/payouts/${payout.id}?expand=None`);
    expect(got.body).toMatchObject({ success: true, payout: { id: payout.id } });
    // One library sends a JSON body on DELETE too.
    const deleted = await raw(
      "DELETE",
      `/payouts/${payout.id}?expand=None`,
      JSON.stringify({ expand: null }),
    );
    expect(deleted).toEqual({ status: 200, body: { success: true } });
    const empty = await raw("GET", "/payouts");
    expect(empty.body).toMatchObject({ success: true, payouts: [], count: 0, total_count: 0 });
  });
});

describe("payouts read from Stripe", () => {
  let stripe: StripeDouble;

  beforeAll(async () => {
    stripe = await startStripeDouble();
    process.env.STRIPE_API_URL = stripe.url;
  });

  afterAll(async () => {
    await stripe?.close();
  });

  it("read a Stripe payout and its balance transactions at the daily close, matched to our transactions, once", async () => {
    const env = await providerEnvironment(local.url, "Stripe payouts", "stripe", {
      secret_key: "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
      webhook_secret: "whsec_test",
    });
    const stripePay = async (amount: string) => {
      const card = (
        await env.client.post("/cards", { number: CREDIT, exp_month: 12, exp_year: 2099, cvc2: "123" })
      ).body.card;
      const invoice = (await env.client.post("/invoices", { name: "Order", amount, currency: "EUR" })).body
        .invoice;
      const captured = await env.client.post(`/invoices/${invoice.id}/capture`, { source: card.id });
      expect(captured.status, JSON.stringify(captured.body)).toBe(200);
      return captured.body.transaction;
    };
    const large = await stripePay("100.00");
    const small = await stripePay("20.00");
    const refunded = await env.client.post(`/invoices/${large.invoice_id}/refunds`, { amount: "5.00" });
    expect(refunded.status).toBe(200);
    const stripePayout = stripe.payOut("eur");
    const day = String((await env.client.get("/sandbox/clock")).body.clock.now).slice(0, 10);

    expect((await close(env.scope, day)).outcome).toMatch(/Stripe payouts: 1 of 1 read made/);

    const [payout, ...others] = (await env.client.get("/payouts")).body.payouts;
    expect(others).toEqual([]);
    // Stripe's fee: 1.5 % + 0.25 per charge (1.75 and 0.55), none on the refund.
    expect(payout).toMatchObject({
      status: "paid",
      amount: "112.70",
      currency: "EUR",
      sales_transactions: 2,
      sales_volume: "120.00",
      refunds_transactions: 1,
      refunds_volume: "5.00",
      fees: "2.30",
      adjustments: "0.00",
      gateway_configuration_id: env.configurationId,
      gateway_resource_id: stripePayout,
      reconciliation: { status: "matched", unmatched_items: 0 },
    });
    const items = await itemsOf(env, payout.id);
    expect(items).toHaveLength(3);
    expect(
      items.find((item: Json) => item.type === "sale" && item.transaction_id === large.id),
    ).toMatchObject({
      amount: "100.00",
      fees: "1.75",
      breakdown: { gateway_fee: "1.75", other_fee: "0.00" },
      reconciled: true,
    });
    expect(
      items.find((item: Json) => item.type === "sale" && item.transaction_id === small.id),
    ).toMatchObject({
      amount: "20.00",
      fees: "0.55",
    });
    expect(items.find((item: Json) => item.type === "refund")).toMatchObject({
      transaction_id: large.id,
      amount: "-5.00",
      fees: "0.00",
      reconciled: true,
    });
    for (const item of items) expect(sum(feeParts(item))).toBe(item.fees);
    // Every request asked only what the connector documents: payouts, then their balance transactions.
    expect(
      stripe.requests.filter((request) => request.method === "GET").map((request) => request.path),
    ).toEqual(expect.arrayContaining(["/v1/payouts", "/v1/balance_transactions"]));

    // Checked again when fetched: our side changed after the payout (as a record gone wrong would).
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.resource(env.scope, small.id),
        UpdateExpression: "SET captured_amount = :amount",
        ExpressionAttributeValues: { ":amount": "19.00" },
      }),
    );
    expect((await env.client.get(`/payouts/${payout.id}`)).body.payout.reconciliation).toMatchObject({
      status: "mismatched",
      unmatched_items: 1,
    });
    expect(
      (await itemsOf(env, payout.id)).find((item: Json) => item.transaction_id === small.id),
    ).toMatchObject({
      reconciled: false,
      mismatch: "the transaction captured 19.00, the item 20.00",
    });
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.resource(env.scope, small.id),
        UpdateExpression: "SET captured_amount = :amount",
        ExpressionAttributeValues: { ":amount": "20.00" },
      }),
    );

    // Read again by the next close: the same payout, made once.
    expect((await close(env.scope, day)).outcome).toMatch(/Stripe payouts: 0 of 1 read made/);
    expect((await env.client.get("/payouts")).body.payouts).toEqual([payout]);
    expect((await env.client.get(`/payouts/${payout.id}`)).body.payout.reconciliation.status).toBe("matched");
  });
});
