import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { lambdaContext } from "../../lib/local/lambda.ts";
import { createLocalMetrics, type LocalMetrics, seriesOf } from "../../lib/local/metrics.ts";
import { clock } from "../../shared/clock.ts";
import { OutcomeUnknown, ProviderUnreachable } from "../../shared/gateways/connector.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { sendMetricsTo } from "../../shared/observability/metrics.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { jobHandler } from "../../shared/scheduling/handler.ts";
import { useInProcessApi } from "../e2e/harness.ts";

/**
 * The metrics of what the local stack's end-to-end test cannot easily make happen: a provider that
 * fails, the recovery job's settlements, a scheduled job that fails. Collected in this process as
 * the local stack collects them.
 */
const local = useInProcessApi("Metrics test");
const client = local.sandbox;
const scope = () => local.project.sandbox.project_id;
const stage = { stage: "local" };
let metrics: LocalMetrics;

beforeAll(() => {
  metrics = createLocalMetrics();
  sendMetricsTo(metrics.collect);
});

afterAll(() => {
  sendMetricsTo(undefined);
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function authorizeOnce() {
  const card = await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
  const invoice = await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" });
  return client.post(`/invoices/${invoice.body.invoice.id}/authorize`, { source: card.body.card.id });
}

async function configurationId(): Promise<string> {
  const { body } = await client.get("/gateway-configurations");
  const card = (body.gateway_configurations as Array<{ id: string; payment_method: string }>).find(
    (configuration) => configuration.payment_method === "card",
  );
  return card?.id as string;
}

describe("the provider metrics", () => {
  it("count a provider that cannot be reached as a failed call and a payment without an outcome", async () => {
    const configuration = await configurationId();
    const byConfiguration = { ...stage, gateway_configuration: configuration };
    const before = {
      errors: seriesOf(metrics.series(), "Payments", { ...byConfiguration, outcome: "error" }).sum,
      failedCalls: seriesOf(metrics.series(), "ProviderErrors", byConfiguration).sum,
      approved: seriesOf(metrics.series(), "Approved", byConfiguration).count,
    };
    vi.spyOn(sandboxConnector.card, "authorize").mockRejectedValueOnce(
      new ProviderUnreachable("connection refused"),
    );

    const answer = await authorizeOnce();

    expect(answer.status).toBe(502);
    const all = metrics.series();
    expect(seriesOf(all, "Payments", { ...byConfiguration, outcome: "error" }).sum - before.errors).toBe(1);
    expect(seriesOf(all, "ProviderErrors", byConfiguration).sum - before.failedCalls).toBe(1);
    // No answer: not in the authorization rate.
    expect(seriesOf(all, "Approved", byConfiguration).count).toBe(before.approved);
  });

  it("count the recovery job's settlement of an authorization whose answer was lost, by what it settled it as", async () => {
    const real = sandboxConnector.card.authorize.bind(sandboxConnector.card);
    vi.spyOn(sandboxConnector.card, "authorize").mockImplementationOnce(async (request) => {
      await real(request);
      throw new OutcomeUnknown("timed out waiting for the gateway");
    });
    expect((await authorizeOnce()).status).toBe(504);
    const settledBefore = seriesOf(metrics.series(), "RecoverySettlements", {
      ...stage,
      outcome: "approved",
    }).sum;

    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
    const report = await recoverReservations({ onlyScope: scope() });
    // The recovery job's function prints its metrics at its end; called directly here, they wait.
    (await import("../../shared/observability/metrics.ts")).flushMetrics();

    expect(report.settled).toBe(1);
    const all = metrics.series();
    expect(seriesOf(all, "RecoverySettlements", { ...stage, outcome: "approved" }).sum - settledBefore).toBe(
      1,
    );
  });
});

describe("the scheduler metrics", () => {
  const job = { kind: "capture-invoice", scope: "test-proj_01JABCDEFGHJKMNPQRSTVWXYZ0", invoiceId: "iv_1" };

  it("count a failed run of a job, with its lag behind the time it was due", async () => {
    const run = jobHandler("capture-invoice", async () => {
      throw new Error("the invoice is busy");
    });
    const before = seriesOf(metrics.series(), "SchedulerFailures", { ...stage, job: "capture" });
    const due = new Date(Date.now() - 2_000).toISOString();

    await expect(
      run({ ...job, scheduledTime: due }, lambdaContext("jobs/capture-invoice", 30_000)),
    ).rejects.toThrow("the invoice is busy");

    const failures = seriesOf(metrics.series(), "SchedulerFailures", { ...stage, job: "capture" });
    expect([failures.sum - before.sum, failures.count - before.count]).toEqual([1, 1]);
    const lag = seriesOf(metrics.series(), "SchedulerLag", { ...stage, job: "capture" });
    expect(lag.max).toBeGreaterThanOrEqual(2_000);
    expect(lag.max).toBeLessThan(10_000);
  });

  it("count a run started without a due time (by hand) with no lag", async () => {
    const run = jobHandler("capture-invoice", async () => "done");
    const before = seriesOf(metrics.series(), "SchedulerLag", { ...stage, job: "capture" }).count;
    const failuresBefore = seriesOf(metrics.series(), "SchedulerFailures", { ...stage, job: "capture" });

    await run(job, lambdaContext("jobs/capture-invoice", 30_000));

    expect(seriesOf(metrics.series(), "SchedulerLag", { ...stage, job: "capture" }).count).toBe(before);
    const failures = seriesOf(metrics.series(), "SchedulerFailures", { ...stage, job: "capture" });
    expect([failures.sum - failuresBefore.sum, failures.count - failuresBefore.count]).toEqual([0, 1]);
  });
});
