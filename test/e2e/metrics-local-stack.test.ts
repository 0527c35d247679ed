import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MetricSeries, parseMetricsPage, seriesOf } from "../../lib/local/metrics.ts";
import { eventually, type Receiver, startReceiver } from "../support/webhooks.ts";
import { api, type RunningStack, startStack } from "./harness.ts";

/**
 * The business metrics as `npm start` collects them (`GET /local/metrics`): after a known set of
 * requests, payments, webhook deliveries and a delayed capture, each figure is exactly what this
 * test did. The stack has its own DynamoDB Local: on the shared one, other stacks' stream pollers
 * would deliver (and count) this project's webhooks.
 */
let dataDir: string;
let stack: RunningStack;
let receiver: Receiver;
let sandbox: ReturnType<typeof api>;

const local = { stage: "local" };

async function metrics(): Promise<MetricSeries[]> {
  const response = await fetch(`${stack.url}/local/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  return parseMetricsPage(await response.text());
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "metrics-stack-test-"));
  receiver = await startReceiver("metrics");
  stack = await startStack({ dataDir, dynamodb: "own" });
  sandbox = api(stack.url, stack.credentials.sandbox);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the business metrics of the local stack (GET /local/metrics)", () => {
  it("counts each API request by route and status class, with its latency", async () => {
    const created = [];
    for (const name of ["Ada", "Grace", "Edsger"]) {
      const answer = await sandbox.post("/customers", { first_name: name });
      expect(answer.status).toBe(200);
      created.push(answer.body.customer.id as string);
    }
    expect((await sandbox.get(`/customers/${created[0]}`)).status).toBe(200);
    expect((await sandbox.get(`/customers/${created[1]}`)).status).toBe(200);
    expect((await sandbox.get("/customers/cust_01JABCDEFGHJKMNPQRSTVWXYZ0")).status).toBe(404);
    // A replayed Idempotency-Key is answered early by a middleware: it counts too.
    const keyed = { idempotencyKey: "metrics-replay-1" };
    expect((await sandbox.post("/customers", { first_name: "Alan" }, keyed)).status).toBe(200);
    expect((await sandbox.post("/customers", { first_name: "Alan" }, keyed)).status).toBe(200);

    const all = await metrics();
    const create = { ...local, route: "POST /customers" };
    const read = { ...local, route: "GET /customers/{customer_id}" };
    expect(seriesOf(all, "Requests", create)).toMatchObject({ sum: 5, count: 5, unit: "Count" });
    expect(seriesOf(all, "ClientErrors", create)).toMatchObject({ sum: 0, count: 5 });
    expect(seriesOf(all, "ServerErrors", create)).toMatchObject({ sum: 0, count: 5 });
    expect(seriesOf(all, "Requests", read)).toMatchObject({ sum: 3, count: 3 });
    expect(seriesOf(all, "ClientErrors", read)).toMatchObject({ sum: 1, count: 3 });
    expect(seriesOf(all, "ServerErrors", read)).toMatchObject({ sum: 0, count: 3 });
    const latency = seriesOf(all, "Latency", read);
    expect(latency).toMatchObject({ count: 3, unit: "Milliseconds" });
    expect(latency.min).toBeGreaterThan(0);
    expect(latency.max).toBeLessThan(29_000);
    // The stage-wide series holds every route's requests, these among them.
    expect(seriesOf(all, "Requests", local).sum).toBeGreaterThanOrEqual(8);
    expect(seriesOf(all, "Requests", local).sum).toBe(
      all
        .filter((one) => one.metric === "Requests" && one.dimensions.route !== undefined)
        .reduce((sum, one) => sum + one.sum, 0),
    );
  });

  it("counts payments by configuration and outcome, the approval rate and the provider's calls", async () => {
    const pay = async (number: string, path: "authorize" | "capture") => {
      const card = await sandbox.post("/cards", { number, exp_month: 12, exp_year: 2099 });
      const invoice = await sandbox.post("/invoices", { name: "Order", amount: "10.00", currency: "EUR" });
      return sandbox.post(`/invoices/${invoice.body.invoice.id}/${path}`, { source: card.body.card.id });
    };
    const approved = await pay("4242424242424242", "capture");
    expect(approved.body.transaction.status).toBe("completed");
    const configuration = approved.body.transaction.gateway_configuration_id as string;
    expect(configuration).toMatch(/^gway_conf_/);
    expect((await pay("4242424242424242", "authorize")).body.transaction.status).toBe("authorized");
    const declined = await pay("4000000000000002", "authorize");
    expect([declined.status, declined.body.error_type]).toEqual([410, "card.declined"]);

    const all = await metrics();
    const byConfiguration = { ...local, gateway_configuration: configuration };
    expect(seriesOf(all, "Payments", { ...byConfiguration, outcome: "approved" }).sum).toBe(2);
    expect(seriesOf(all, "Payments", { ...byConfiguration, outcome: "declined" }).sum).toBe(1);
    expect(seriesOf(all, "Payments", { ...byConfiguration, outcome: "error" }).sum).toBe(0);
    expect(seriesOf(all, "Payments", local).sum).toBe(3);
    // Approved: 1 per approval, 0 per decline; its average is the authorization rate.
    expect(seriesOf(all, "Approved", byConfiguration)).toMatchObject({ sum: 2, count: 3 });
    // The capture with a source called the provider twice (authorize, capture), each authorize once.
    expect(seriesOf(all, "ProviderLatency", byConfiguration)).toMatchObject({
      count: 4,
      unit: "Milliseconds",
    });
    expect(seriesOf(all, "ProviderErrors", byConfiguration)).toMatchObject({ sum: 0, count: 4 });
    // The decline's 410 is a client error of its route.
    const authorize = { ...local, route: "POST /invoices/{invoice_id}/authorize" };
    expect(seriesOf(all, "ClientErrors", authorize)).toMatchObject({ sum: 1, count: 2 });
  });

  it("counts webhook deliveries, their lag and failed attempts as the receiver answered them", async () => {
    // The first request is refused (retried a minute later), every other one acknowledged.
    receiver.respond = (previous) => (previous === 0 ? 500 : 200);
    const before = await metrics();
    const delivered = (all: MetricSeries[]) =>
      seriesOf(all, "WebhookDeliveries", local).sum - seriesOf(before, "WebhookDeliveries", local).sum;
    const project = await sandbox.put(`/projects/${stack.credentials.sandbox.project_id}`, {
      webhook_url: receiver.url,
    });
    expect(project.status).toBe(200);
    for (const name of ["Barbara", "Frances", "Radia"]) {
      expect((await sandbox.post("/customers", { first_name: name })).status).toBe(200);
    }
    // Three customer events, and the project's update if it made one: all but the refused one acknowledged.
    await receiver.waitFor(3);
    const all = await eventually(metrics, (now) => delivered(now) === receiver.requests.length - 1);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(3);
    expect(seriesOf(all, "WebhookFailures", local).sum - seriesOf(before, "WebhookFailures", local).sum).toBe(
      1,
    );
    expect(seriesOf(all, "WebhookDeadLetters", local).sum).toBe(0);
    const lag = seriesOf(all, "WebhookLag", local);
    expect(lag.count).toBe(seriesOf(all, "WebhookDeliveries", local).sum);
    expect(lag.min).toBeGreaterThanOrEqual(0);
    expect(lag.max).toBeLessThan(60_000);
  });

  it("counts a delayed capture's run with its lag behind its due time", async () => {
    const card = await sandbox.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
    const invoice = await sandbox.post("/invoices", { name: "Order", amount: "10.00", currency: "EUR" });
    const due = new Date(Date.now() + 1_500);
    const authorized = await sandbox.post(`/invoices/${invoice.body.invoice.id}/authorize`, {
      source: card.body.card.id,
      auto_capture_at: due.toISOString(),
    });
    expect(authorized.body.transaction.status).toBe("authorized");

    const all = await eventually(
      metrics,
      (now) => seriesOf(now, "SchedulerFailures", { ...local, job: "capture" }).count === 1,
      15_000,
    );
    expect(seriesOf(all, "SchedulerFailures", { ...local, job: "capture" }).sum).toBe(0);
    const lag = seriesOf(all, "SchedulerLag", { ...local, job: "capture" });
    expect(lag.count).toBe(1);
    // The local scheduler ticks every second, and fires at the due time rounded up to the second.
    expect(lag.max).toBeGreaterThanOrEqual(0);
    expect(lag.max).toBeLessThan(5_000);
    const transaction = (await sandbox.get(`/transactions/${authorized.body.transaction.id}`)).body
      .transaction;
    expect(transaction.status).toBe("completed");
  });
});
