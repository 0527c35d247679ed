/**
 * The overview's statistics (issue 24): every authorization attempt's outcome and approved amount,
 * counted per environment, gateway configuration and hour in the transaction that settles it, so
 * the counts are exact under concurrency and a replayed request is counted once; read in hourly or
 * daily buckets by `GET /statistics`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { dynamo } from "../../shared/db/client.ts";
import { ProviderUnreachable } from "../../shared/gateways/connector.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { SANDBOX_APM_SUCCESS_EMAIL } from "../../shared/gateways/sandbox/native-apm.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { killedAtTransaction } from "../support/crash.ts";

const local = useInProcessApi("Statistics test");

afterEach(() => {
  vi.restoreAllMocks();
});

interface Bucket {
  start: string;
  attempts: number;
  approved: number;
  declined: number;
  failed: number;
  amounts: Record<string, string>;
}
interface Series {
  gateway_configuration_id: string;
  buckets: Bucket[];
}

const APPROVED = "4242424242424242";
const DECLINED = "4000000000000002";

async function configuration(client: Client, name: string, settings: Record<string, string> = {}) {
  const { status, body } = await client.post("/gateways/sandbox/gateway-configurations", { name, settings });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.gateway_configuration.id as string;
}

/** Authorizes a new invoice with a new card; the answer's status (200 approved, 402/410 declined, …). */
async function pay(
  client: Client,
  number: string,
  amount: string,
  currency: string,
  idempotencyKey?: string,
) {
  const card = (await client.post("/cards", { number, exp_month: 12, exp_year: 2099 })).body.card;
  const invoice = (await client.post("/invoices", { name: "Order", amount, currency })).body.invoice;
  const path = `/invoices/${invoice.id}/authorize`;
  const send = () => client.post(path, { source: card.id }, idempotencyKey ? { idempotencyKey } : {});
  const first = await send();
  return { first, again: idempotencyKey ? await send() : undefined };
}

async function statistics(client: Client, query: string) {
  const { status, body } = await client.get(`/statistics?${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.statistics as { interval: string; from: string; to: string; series: Series[] };
}

/** The sums of a series' buckets. */
function totals(series: Series | undefined) {
  const sum = { attempts: 0, approved: 0, declined: 0, failed: 0 };
  for (const bucket of series?.buckets ?? []) {
    for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += bucket[key];
  }
  return sum;
}

/** What `read` answers, and the statistics partitions it queried. */
async function queried<T>(read: () => Promise<T>): Promise<{ answer: T; partitions: string[] }> {
  const send = dynamo.send.bind(dynamo);
  const partitions: string[] = [];
  const spy = vi.spyOn(dynamo, "send").mockImplementation(((command: {
    constructor: { name: string };
    input: { ExpressionAttributeValues?: Record<string, { S?: string }> };
  }) => {
    const pk = command.input?.ExpressionAttributeValues?.[":pk"]?.S;
    if (command.constructor.name === "QueryCommand" && pk?.includes("#statistics")) partitions.push(pk);
    return send(command as never);
  }) as never);
  try {
    return { answer: await read(), partitions };
  } finally {
    spy.mockRestore();
  }
}

const hour = (at: Date) => `${at.toISOString().slice(0, 13)}:00:00.000Z`;

describe("GET /statistics", () => {
  it("counts approved, declined and failed attempts per configuration exactly, concurrent ones and a replay once each, in hour and day buckets", async () => {
    const project = await createProject("Statistics");
    const client = api(local.url, project.sandbox);
    const configurations = (await client.get("/gateway-configurations")).body.gateway_configurations;
    const sandbox = configurations.find((item: { payment_method: string }) => item.payment_method === "card")
      .id as string;
    const second = await configuration(client, "Second");
    const down = await configuration(client, "Down", { outage: "true" });
    const version = (await client.get("/routing-rules")).body.routing_rules.version;
    const rules = await client.put("/routing-rules", {
      version,
      rules: [
        {
          id: "usd",
          conditions: { currencies: ["USD"] },
          action: { type: "route", gateway_configuration_ids: [down, second] },
        },
        {
          id: "eur",
          conditions: { currencies: ["EUR"] },
          action: { type: "route", gateway_configuration_ids: [sandbox] },
        },
      ],
    });
    expect(rules.status, JSON.stringify(rules.body)).toBe(200);
    const started = new Date();

    // Ten approvals at once through the sandbox configuration, amounts summed exactly.
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, (_, index) => pay(client, APPROVED, `10.0${index}`, "EUR")),
    );
    for (const { first } of concurrent) expect(first.status, JSON.stringify(first.body)).toBe(200);
    // Two declines, and an approval replayed with its Idempotency-Key (counted once).
    for (let index = 0; index < 2; index++)
      expect((await pay(client, DECLINED, "5.00", "EUR")).first.status).not.toBe(200);
    const replayed = await pay(client, APPROVED, "0.55", "EUR", `statistics-replay-${Date.now()}`);
    expect(replayed.first.status).toBe(200);
    expect(replayed.again?.status).toBe(200);
    expect(replayed.again?.body).toEqual(replayed.first.body);
    // USD goes to a configuration that is down (a failed attempt) and cascades to the second one.
    for (const amount of ["1.10", "2.20"]) {
      const { first } = await pay(client, APPROVED, amount, "USD");
      expect(first.status, JSON.stringify(first.body)).toBe(200);
    }

    const to = new Date(Date.now() + 3_600_000);
    const hourly = await statistics(
      client,
      `from=${started.toISOString()}&to=${to.toISOString()}&interval=hour`,
    );
    expect(hourly).toMatchObject({ interval: "hour", from: hour(started), to: to.toISOString() });
    const of = (id: string, series = hourly.series) =>
      series.find((item) => item.gateway_configuration_id === id);
    expect(hourly.series.map((item) => item.gateway_configuration_id).sort()).toEqual(
      [sandbox, second, down].sort(),
    );
    expect(totals(of(sandbox))).toEqual({ attempts: 13, approved: 11, declined: 2, failed: 0 });
    expect(totals(of(second))).toEqual({ attempts: 2, approved: 2, declined: 0, failed: 0 });
    expect(totals(of(down))).toEqual({ attempts: 2, approved: 0, declined: 0, failed: 2 });
    // Every hour of the range is a bucket (zeros included); the attempts are in the hour they were made.
    const buckets = of(sandbox)?.buckets ?? [];
    expect(buckets[0]?.start).toBe(hour(started));
    expect(buckets.length).toBeGreaterThanOrEqual(2);
    const amounts = buckets.flatMap((bucket) => Object.entries(bucket.amounts));
    // 10.00 + … + 10.09 + 0.55 (the replay once) = 101.00; no amount for the declines.
    expect(amounts.filter(([currency]) => currency === "EUR").map(([, value]) => value)).toEqual(
      buckets.filter((bucket) => bucket.approved > 0).map((bucket) => bucket.amounts.EUR),
    );
    const euros = buckets.reduce((sum, bucket) => sum + Number(bucket.amounts.EUR ?? 0) * 100, 0);
    expect(Math.round(euros)).toBe(10_100);
    expect(buckets.find((bucket) => bucket.approved > 0)?.amounts.EUR).toMatch(/^\d+\.\d{2}$/);
    expect(of(second)?.buckets.find((bucket) => bucket.approved > 0)?.amounts).toEqual({ USD: "3.30" });
    expect(of(down)?.buckets.every((bucket) => Object.keys(bucket.amounts).length === 0)).toBe(true);

    // Two hours later on the sandbox clock, an attempt lands in a later hour, and in the same day.
    const later = new Date(Date.now() + 2 * 3_600_000);
    const advanced = await client.post("/sandbox/clock", { advance_to: later.toISOString() });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect((await pay(client, DECLINED, "7.00", "EUR")).first.status).not.toBe(200);
    const end = new Date(later.getTime() + 3_600_000);
    const afterwards = await statistics(
      client,
      `from=${started.toISOString()}&to=${end.toISOString()}&interval=hour`,
    );
    const laterBucket = of(sandbox, afterwards.series)?.buckets.find(
      (bucket) => bucket.start === hour(later),
    );
    expect(laterBucket).toMatchObject({ attempts: 1, declined: 1, approved: 0 });
    expect(totals(of(sandbox, afterwards.series))).toEqual({
      attempts: 14,
      approved: 11,
      declined: 3,
      failed: 0,
    });

    // By day: the sums of the hours, in buckets starting at midnight UTC, read from the day items
    // alone (16 partitions of days, no hour's).
    const range = `from=${started.toISOString()}&to=${end.toISOString()}`;
    const { answer: daily, partitions } = await queried(() => statistics(client, `${range}&interval=day`));
    const kinds = (queried: string[]) => [...new Set(queried.map((pk) => pk.replace(/#\d+$/, "")))];
    expect(partitions).toHaveLength(16);
    expect(kinds(partitions)).toEqual([`${project.sandbox.project_id}#statistics-day`]);
    const hourly16 = await queried(() => statistics(client, `${range}&interval=hour`));
    expect(kinds(hourly16.partitions)).toEqual([`${project.sandbox.project_id}#statistics`]);
    const midnight = `${started.toISOString().slice(0, 10)}T00:00:00.000Z`;
    expect(daily.from).toBe(midnight);
    expect(of(sandbox, daily.series)?.buckets[0]?.start).toBe(midnight);
    for (const id of [sandbox, second, down])
      expect(totals(of(id, daily.series))).toEqual(totals(of(id, afterwards.series)));
    expect(
      of(sandbox, daily.series)
        ?.buckets.map((bucket) => Number(bucket.amounts.EUR ?? 0) * 100)
        .reduce((sum, cents) => sum + cents, 0),
    ).toBeCloseTo(10_100, 6);

    // Another project's numbers are never seen, nor ours by it.
    const other = api(local.url, (await createProject("Statistics elsewhere")).sandbox);
    expect((await pay(other, APPROVED, "99.00", "EUR")).first.status).toBe(200);
    const theirs = await statistics(other, `from=${started.toISOString()}&to=${end.toISOString()}`);
    expect(theirs.series).toHaveLength(1);
    expect(totals(theirs.series[0])).toEqual({ attempts: 1, approved: 1, declined: 0, failed: 0 });
    expect([sandbox, second, down]).not.toContain(theirs.series[0]?.gateway_configuration_id);
    const ours = await statistics(client, `from=${started.toISOString()}&to=${end.toISOString()}`);
    expect(totals(of(sandbox, ours.series))).toEqual({ attempts: 14, approved: 11, declined: 3, failed: 0 });
    expect(ours.series).toHaveLength(3);
  }, 120_000);

  it("counts an authorization settled by the recovery job once, when two runs race to settle it", async () => {
    const project = await createProject("Statistics recovery");
    const client = api(local.url, project.sandbox);
    const scope = project.sandbox.project_id;
    const started = new Date();
    const card = (await client.post("/cards", { number: APPROVED, exp_month: 12, exp_year: 2099 })).body.card;
    const invoice = (await client.post("/invoices", { name: "Order", amount: "12.34", currency: "USD" })).body
      .invoice;
    // The process dies at the settlement (its second transaction): the attempt is not counted yet.
    const restore = killedAtTransaction(2);
    expect((await client.post(`/invoices/${invoice.id}/authorize`, { source: card.id })).status).toBe(500);
    restore();
    const range = `from=${started.toISOString()}&to=${new Date(Date.now() + 2 * 3_600_000).toISOString()}`;
    expect((await statistics(client, range)).series).toEqual([]);

    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
    const runs = await Promise.all([
      recoverReservations({ onlyScope: scope }),
      recoverReservations({ onlyScope: scope }),
    ]);
    expect(runs.reduce((settled, run) => settled + run.settled, 0)).toBe(1);
    vi.restoreAllMocks();
    const { series } = await statistics(client, range);
    expect(series).toHaveLength(1);
    expect(totals(series[0])).toEqual({ attempts: 1, approved: 1, declined: 0, failed: 0 });
    expect(series[0]?.buckets.find((bucket) => bucket.approved === 1)?.amounts).toEqual({ USD: "12.34" });
  });

  it("counts native APM payments: a confirmation approved, a refusal declined, a provider out of reach failed, a replay and a recovered step once, a request for more input not at all", async () => {
    const project = await createProject("Statistics native APM");
    const client = api(local.url, project.sandbox);
    const scope = project.sandbox.project_id;
    const apm = (await client.get("/gateway-configurations?filter=native-alternative-payment-methods")).body
      .gateway_configurations[0] as { id: string; gateway_name: string };
    const source = `${apm.id}.${apm.gateway_name}`;
    const invoice = async (amount: string) =>
      (await client.post("/invoices", { name: "Order", amount, currency: "EUR" })).body.invoice.id as string;
    const step = (invoiceId: string, values: Record<string, string>, idempotencyKey?: string) =>
      client.post(
        `/invoices/${invoiceId}/native-payment`,
        { gateway_configuration_id: source, native_apm: { parameter_values: values } },
        idempotencyKey ? { idempotencyKey } : {},
      );
    const started = new Date();
    const range = `from=${started.toISOString()}&to=${new Date(Date.now() + 2 * 3_600_000).toISOString()}`;

    // Asked for more input (CUSTOMER_INPUT): no outcome yet, nothing counted.
    const confirmed = await invoice("25.00");
    expect((await step(confirmed, { email: SANDBOX_APM_SUCCESS_EMAIL })).body.native_apm.state).toBe(
      "CUSTOMER_INPUT",
    );
    expect((await statistics(client, range)).series).toEqual([]);
    // Confirmed (PENDING_CAPTURE), sent twice with its Idempotency-Key: one approval.
    const key = `statistics-native-${Date.now()}`;
    const first = await step(confirmed, { token: "123456" }, key);
    expect(first.body.native_apm?.state, JSON.stringify(first.body)).toBe("PENDING_CAPTURE");
    const again = await step(confirmed, { token: "123456" }, key);
    expect(again.body).toEqual(first.body);
    // Refused by the provider: a decline.
    const refused = await invoice("3.00");
    expect((await step(refused, { email: "someone@example.com" })).body.error_type).toBe("gateway.declined");
    // The provider out of reach: nothing done, a failed attempt.
    const unreachable = await invoice("4.00");
    vi.spyOn(sandboxConnector.nativeApm, "pay").mockRejectedValueOnce(new ProviderUnreachable("down"));
    expect((await step(unreachable, { email: SANDBOX_APM_SUCCESS_EMAIL })).status).toBe(502);
    vi.restoreAllMocks();
    // The process dies at the confirmation's settlement; two racing recovery runs settle it once.
    const recovered = await invoice("0.50");
    expect((await step(recovered, { email: SANDBOX_APM_SUCCESS_EMAIL })).status).toBe(200);
    const restore = killedAtTransaction(2);
    expect((await step(recovered, { token: "123456" })).status).toBe(500);
    restore();
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
    const runs = await Promise.all([
      recoverReservations({ onlyScope: scope }),
      recoverReservations({ onlyScope: scope }),
    ]);
    expect(runs.reduce((settled, run) => settled + run.settled, 0)).toBe(1);
    vi.restoreAllMocks();
    const recoveredState = (await client.get(`/invoices/${recovered}/transactions`)).body.transaction;
    expect(recoveredState.native_apm?.state).toBe("PENDING_CAPTURE");

    for (const interval of ["hour", "day"]) {
      const { series } = await statistics(client, `${range}&interval=${interval}`);
      expect(series.map((item) => item.gateway_configuration_id)).toEqual([apm.id]);
      expect(totals(series[0]), interval).toEqual({ attempts: 4, approved: 2, declined: 1, failed: 1 });
      const euros = (series[0]?.buckets ?? []).reduce(
        (sum, bucket) => sum + Number(bucket.amounts.EUR ?? 0) * 100,
        0,
      );
      expect(Math.round(euros), interval).toBe(2_550);
    }
  }, 60_000);

  it("counts a subscription's renewal charge, made by the billing job, like any authorization", async () => {
    const project = await createProject("Statistics renewal");
    const client = api(local.url, project.sandbox);
    await client.post("/plans", {
      id: "monthly",
      name: "Monthly",
      amount: "9.99",
      currency: "EUR",
      interval: "1m",
      trial_period: "1d",
    });
    const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
    const card = (await client.post("/cards", { number: APPROVED, exp_month: 12, exp_year: 2099 })).body.card;
    const created = await client.post("/subscriptions", {
      customer_id: customer.id,
      plan_id: "monthly",
      source: card.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const now = new Date((await client.get("/sandbox/clock")).body.clock.now);
    const past = new Date(now.getTime() + 2 * 86_400_000);
    const advanced = await client.post("/sandbox/clock", { advance_to: past.toISOString() });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect(advanced.body.jobs.map((job: { kind: string; outcome: string }) => job.outcome)).toContain(
      "charged",
    );
    const range = `from=${now.toISOString()}&to=${new Date(past.getTime() + 3_600_000).toISOString()}`;
    for (const interval of ["hour", "day"]) {
      const { series } = await statistics(client, `${range}&interval=${interval}`);
      expect(series, interval).toHaveLength(1);
      expect(totals(series[0]), interval).toEqual({ attempts: 1, approved: 1, declined: 0, failed: 0 });
      const charged = series[0]?.buckets.find((bucket) => bucket.approved === 1);
      expect(charged?.amounts, interval).toEqual({ EUR: "9.99" });
      // In the bucket of the trial's end (business time), not of the machine's time.
      const unit = interval === "hour" ? 3_600_000 : 86_400_000;
      const trialEnd = Date.parse(created.body.subscription.trial_end_at);
      expect(Date.parse(charged?.start ?? "")).toBe(Math.floor(trialEnd / unit) * unit);
    }
  }, 60_000);

  it("refuses a bad interval or range with a 400 naming the field, and needs the private key", async () => {
    const project = await createProject("Statistics input");
    const client = api(local.url, project.sandbox);
    const now = Date.now();
    const iso = (offsetDays: number) => new Date(now + offsetDays * 86_400_000).toISOString();
    const refused = async (query: string, field: string) => {
      const { status, body } = await client.get(`/statistics?${query}`);
      expect(status, query).toBe(400);
      expect(body.error_type).toBe(`request.validation.invalid-${field}`);
      expect(body.message).toContain(field);
    };
    await refused("interval=week", "interval");
    await refused("from=yesterday", "from");
    await refused(`from=${iso(0)}&to=not-a-date`, "to");
    await refused(`from=${iso(0)}&to=${iso(-1)}`, "from");
    await refused(`from=${iso(-32)}&to=${iso(0)}&interval=hour`, "to");
    await refused(`from=${iso(-367)}&to=${iso(0)}&interval=day`, "to");

    // The longest ranges are answered, empty.
    const month = await statistics(client, `from=${iso(-31)}&to=${iso(0)}&interval=hour`);
    expect(month.series).toEqual([]);
    expect((await statistics(client, `from=${iso(-365)}&to=${iso(0)}&interval=day`)).interval).toBe("day");
    // Without a range: the last day by hour.
    const fallback = await statistics(client, "");
    expect(Date.parse(fallback.to) - Date.parse(fallback.from)).toBeGreaterThanOrEqual(86_400_000);

    const browser = api(local.url, { project_id: project.sandbox.project_id, private_key: "" });
    expect((await browser.get("/statistics")).status).toBe(401);
  });
});
