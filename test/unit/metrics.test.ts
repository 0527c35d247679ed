import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  flushMetrics,
  recordPaymentOutcome,
  recordProviderCall,
  recordRecoverySettlement,
  recordRequest,
  recordSchedulerRun,
  recordWebhookDeadLetter,
  recordWebhookDelivered,
  recordWebhookFailure,
  sendMetricsTo,
} from "../../shared/observability/metrics.ts";

/** What CloudWatch reads from one EMF line. */
interface EmfDocument {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  [key: string]: unknown;
}

let lines: string[] = [];
const documents = () => lines.map((line) => JSON.parse(line) as EmfDocument);

beforeEach(() => {
  lines = [];
  sendMetricsTo((line) => lines.push(line));
});

afterEach(() => {
  flushMetrics();
  sendMetricsTo(undefined);
  vi.unstubAllEnvs();
});

describe("the business metrics (EMF)", () => {
  it("prints an API request as one document: namespace PaymentApi, [stage] and [stage, route], no service", () => {
    recordRequest("POST /invoices/{invoice_id}/capture", 402, 12.5);
    expect(lines).toEqual([]);

    flushMetrics();

    const [document] = documents();
    expect(documents()).toHaveLength(1);
    expect(document?._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: "PaymentApi",
        Dimensions: [["stage"], ["stage", "route"]],
        Metrics: [
          { Name: "Requests", Unit: "Count" },
          { Name: "ServerErrors", Unit: "Count" },
          { Name: "ClientErrors", Unit: "Count" },
          { Name: "Latency", Unit: "Milliseconds" },
        ],
      },
    ]);
    const { _aws, ...fields } = document as EmfDocument;
    expect(fields).toEqual({
      stage: "local",
      route: "POST /invoices/{invoice_id}/capture",
      Requests: 1,
      ServerErrors: 0,
      ClientErrors: 1,
      Latency: 12.5,
    });
    expect(Math.abs(_aws.Timestamp - Date.now())).toBeLessThan(5_000);
  });

  it("counts a 5xx as a server error and a 2xx as neither", () => {
    recordRequest("GET /customers/{customer_id}", 503, 1);
    flushMetrics();
    recordRequest("GET /customers/{customer_id}", 200, 1);
    flushMetrics();

    expect(documents().map(({ ServerErrors, ClientErrors }) => [ServerErrors, ClientErrors])).toEqual([
      [1, 0],
      [0, 0],
    ]);
  });

  it("names the stage from STAGE", async () => {
    const fresh = await freshModule({ STAGE: "prod" });
    fresh.sendMetricsTo((line) => lines.push(line));
    fresh.recordWebhookFailure();
    fresh.flushMetrics();
    expect(documents()[0]?.stage).toBe("prod");
  });

  it("keeps each set of dimension values in its own document, values of one set together", () => {
    recordPaymentOutcome("gc_A", "approved");
    recordPaymentOutcome("gc_A", "approved");
    recordPaymentOutcome("gc_A", "declined");
    recordPaymentOutcome("gc_B", "error");
    recordProviderCall("gc_A", 30, false);
    recordProviderCall("gc_B", 8000, true);
    flushMetrics();

    const shapes = documents().map(({ _aws, ...fields }) => ({
      dimensions: _aws.CloudWatchMetrics[0]?.Dimensions,
      fields,
    }));
    expect(shapes).toEqual([
      {
        dimensions: [["stage"], ["stage", "gateway_configuration", "outcome"]],
        fields: { stage: "local", gateway_configuration: "gc_A", outcome: "approved", Payments: [1, 1] },
      },
      {
        dimensions: [["stage"], ["stage", "gateway_configuration"]],
        fields: {
          stage: "local",
          gateway_configuration: "gc_A",
          Approved: [1, 1, 0],
          ProviderLatency: 30,
          ProviderErrors: 0,
        },
      },
      {
        dimensions: [["stage"], ["stage", "gateway_configuration", "outcome"]],
        fields: { stage: "local", gateway_configuration: "gc_A", outcome: "declined", Payments: 1 },
      },
      {
        dimensions: [["stage"], ["stage", "gateway_configuration", "outcome"]],
        fields: { stage: "local", gateway_configuration: "gc_B", outcome: "error", Payments: 1 },
      },
      {
        dimensions: [["stage"], ["stage", "gateway_configuration"]],
        fields: { stage: "local", gateway_configuration: "gc_B", ProviderLatency: 8000, ProviderErrors: 1 },
      },
    ]);
  });

  it("gives the webhook figures the stage alone, and jobs and settlements their own dimension", () => {
    recordWebhookDelivered(250);
    recordWebhookFailure();
    recordWebhookDeadLetter();
    recordSchedulerRun("capture", 1200, false);
    recordSchedulerRun("renewal", undefined, true);
    recordRecoverySettlement("approved");
    flushMetrics();

    expect(documents().map(({ _aws, ...fields }) => [_aws.CloudWatchMetrics[0]?.Dimensions, fields])).toEqual(
      [
        [
          [["stage"]],
          {
            stage: "local",
            WebhookDeliveries: 1,
            WebhookLag: 250,
            WebhookFailures: 1,
            WebhookDeadLetters: 1,
          },
        ],
        [
          [["stage"], ["stage", "job"]],
          { stage: "local", job: "capture", SchedulerLag: 1200, SchedulerFailures: 0 },
        ],
        [[["stage"], ["stage", "job"]], { stage: "local", job: "renewal", SchedulerFailures: 1 }],
        [[["stage"], ["stage", "outcome"]], { stage: "local", outcome: "approved", RecoverySettlements: 1 }],
      ],
    );
  });

  it("prints nothing when nothing was recorded, and nothing twice", () => {
    flushMetrics();
    expect(lines).toEqual([]);
    recordWebhookFailure();
    flushMetrics();
    flushMetrics();
    expect(lines).toHaveLength(1);
  });

  it("starts a new document before a metric reaches EMF's 100 values, its dimensions kept", () => {
    for (let i = 0; i < 250; i++) recordProviderCall("gc_many", i, false);
    flushMetrics();

    const printed = documents();
    expect(printed.map((document) => (document.ProviderLatency as number[]).length)).toEqual([99, 99, 52]);
    expect(printed.every((document) => document.gateway_configuration === "gc_many")).toBe(true);
    expect(printed.flatMap((document) => document.ProviderLatency as number[])).toEqual(
      Array.from({ length: 250 }, (_, i) => i),
    );
  });

  it("writes each document as one line on stdout when nothing collects them", async () => {
    const fresh = await freshModule({ POWERTOOLS_METRICS_DISABLED: "false" });
    const written: string[] = [];
    const write = vi
      .spyOn(process.stdout, "write")
      .mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
    try {
      fresh.recordRecoverySettlement("not-done");
      fresh.flushMetrics();
    } finally {
      write.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(written[0]?.endsWith("}\n")).toBe(true);
    expect(JSON.parse(written[0] as string).RecoverySettlements).toBe(1);
  });

  it("prints nothing on stdout when POWERTOOLS_METRICS_DISABLED is set, and still gives a collector its lines", async () => {
    const fresh = await freshModule({ POWERTOOLS_METRICS_DISABLED: "true" });
    const write = vi.spyOn(process.stdout, "write");
    try {
      fresh.recordRecoverySettlement("not-done");
      fresh.flushMetrics();
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
    fresh.sendMetricsTo((line) => lines.push(line));
    fresh.recordRecoverySettlement("not-done");
    fresh.flushMetrics();
    expect(documents().map((document) => document.RecoverySettlements)).toEqual([1]);
  });
});

/** The module as a new container loads it, with `env` set (it reads the environment once). */
async function freshModule(env: Record<string, string>) {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.resetModules();
  return import("../../shared/observability/metrics.ts");
}
