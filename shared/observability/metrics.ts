import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";

/**
 * The business metrics (issue 23), in CloudWatch's embedded metric format (EMF) through Powertools
 * Metrics: namespace `PaymentApi`, every metric with the dimension `stage` alone and, where it has
 * one, with its own dimensions beside `stage` (two dimension sets), and no `service` dimension.
 * The README's "Business metrics" lists them; the dashboard and alarms (`lib/monitoring.ts`) read them.
 *
 * The code that knows a figure records it here (`record…`), synchronously and without any I/O; the
 * invocation's wrapper prints everything recorded once, at its end (`flushMetrics`): the API's
 * middleware (`shared/http/api.ts`), the batch helpers of queue and stream workers, the job handlers.
 * A figure is printed as one line on stdout, which Lambda sends to CloudWatch Logs, where EMF makes
 * it a metric: no network call, no table access.
 *
 * Figures are kept with their own dimension values until the flush, which serializes them in one
 * synchronous step: invocations that interleave in one process (the local stack runs every handler
 * in its one process) can never print a figure under another's dimensions.
 */
export const METRICS_NAMESPACE = "PaymentApi";

export type PaymentOutcome = "approved" | "declined" | "error";

/** Where the EMF lines go: stdout (CloudWatch) unless something else collects them (the local stack). */
export type MetricsSink = (emfLine: string) => void;

type Unit = typeof MetricUnit.Count | typeof MetricUnit.Milliseconds;

interface Group {
  /** The dimensions beside `stage` (empty: `stage` alone). */
  dimensions: Record<string, string>;
  values: Map<string, { unit: Unit; values: number[] }>;
}

/**
 * EMF takes at most 100 values per metric in a document (Powertools prints the document early when
 * one reaches it, dropping the request's dimensions for the rest): a group starts anew before that.
 */
const MAX_VALUES_PER_DOCUMENT = 99;

const pending = new Map<string, Group>();
let sink: MetricsSink | undefined;
let powertools: Metrics | undefined;
let disabled: boolean | undefined;

/** `POWERTOOLS_METRICS_DISABLED` (Powertools' own switch, with its values) keeps stdout quiet (the tests). */
function stdoutDisabled(): boolean {
  disabled ??= /^(1|y|yes|t|true|on)$/i.test(process.env.POWERTOOLS_METRICS_DISABLED?.trim() ?? "");
  return disabled;
}

/**
 * One per container, `stage` its one default dimension (Powertools' default `service` is taken off):
 * the stage's name in AWS (`STAGE`), `local` in the local stack.
 */
function metricsInstance(): Metrics {
  if (!powertools) {
    powertools = new Metrics({ namespace: METRICS_NAMESPACE });
    powertools.clearDefaultDimensions();
    powertools.setDefaultDimensions({ stage: process.env.STAGE || "local" });
  }
  return powertools;
}

function record(name: string, unit: Unit, value: number, dimensions: Record<string, string> = {}) {
  let key = "";
  for (const dimension in dimensions) key += `${dimension}=${dimensions[dimension]}\u0000`;
  let group = pending.get(key);
  const full = group?.values.get(name);
  if (group && full && full.values.length >= MAX_VALUES_PER_DOCUMENT) {
    pending.delete(key);
    flushGroup(group);
    group = undefined;
  }
  if (!group) {
    group = { dimensions, values: new Map() };
    pending.set(key, group);
  }
  const metric = group.values.get(name);
  if (metric) metric.values.push(value);
  else group.values.set(name, { unit, values: [value] });
}

/** One API request: its route key (`POST /invoices/{invoice_id}/capture`), status and own duration. */
export function recordRequest(route: string, status: number, durationMs: number): void {
  const byRoute = { route };
  record("Requests", MetricUnit.Count, 1, byRoute);
  record("ServerErrors", MetricUnit.Count, status >= 500 ? 1 : 0, byRoute);
  record("ClientErrors", MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0, byRoute);
  record("Latency", MetricUnit.Milliseconds, durationMs, byRoute);
}

/**
 * A provider's answer to an authorization (a card's authorize, a native APM payment): approved,
 * declined, or no answer (`error`). `Approved` is 1 or 0 for an answer, so its average by
 * configuration is that configuration's authorization rate; errors are not in it.
 */
export function recordPaymentOutcome(gatewayConfiguration: string, outcome: PaymentOutcome): void {
  record("Payments", MetricUnit.Count, 1, { gateway_configuration: gatewayConfiguration, outcome });
  if (outcome !== "error") {
    record("Approved", MetricUnit.Count, outcome === "approved" ? 1 : 0, {
      gateway_configuration: gatewayConfiguration,
    });
  }
}

/** One call to a provider through a configuration's connector: how long, and whether it failed. */
export function recordProviderCall(gatewayConfiguration: string, durationMs: number, failed: boolean): void {
  const byConfiguration = { gateway_configuration: gatewayConfiguration };
  record("ProviderLatency", MetricUnit.Milliseconds, durationMs, byConfiguration);
  record("ProviderErrors", MetricUnit.Count, failed ? 1 : 0, byConfiguration);
}

/** A webhook the receiver acknowledged (2xx), `lagMs` after its event was created. */
export function recordWebhookDelivered(lagMs: number): void {
  record("WebhookDeliveries", MetricUnit.Count, 1);
  record("WebhookLag", MetricUnit.Milliseconds, lagMs);
}

/** A delivery attempt that failed and will be retried. */
export function recordWebhookFailure(): void {
  record("WebhookFailures", MetricUnit.Count, 1);
}

/** A delivery given up: its message goes to the dead-letter queue. */
export function recordWebhookDeadLetter(): void {
  record("WebhookDeadLetters", MetricUnit.Count, 1);
}

/**
 * A scheduled job's run: `job` (`capture`, `renewal`, …), how late it started after it was due
 * (unknown when it was not started by a schedule), and whether it failed (it is then retried).
 */
export function recordSchedulerRun(job: string, lagMs: number | undefined, failed: boolean): void {
  const byJob = { job };
  if (lagMs !== undefined) record("SchedulerLag", MetricUnit.Milliseconds, lagMs, byJob);
  record("SchedulerFailures", MetricUnit.Count, failed ? 1 : 0, byJob);
}

/** A reservation the recovery job settled, and what it settled it as. */
export function recordRecoverySettlement(outcome: string): void {
  record("RecoverySettlements", MetricUnit.Count, 1, { outcome });
}

/**
 * Prints what was recorded since the last flush, one EMF document per set of dimension values,
 * and forgets it. Called once at the end of each invocation; nothing recorded, nothing printed.
 */
export function flushMetrics(): void {
  if (pending.size === 0) return;
  const groups = [...pending.values()];
  pending.clear();
  for (const group of groups) flushGroup(group);
}

function flushGroup(group: Group) {
  if (!sink && stdoutDisabled()) return;
  const metrics = metricsInstance();
  if (Object.keys(group.dimensions).length > 0) {
    // Two dimension sets, each with the default `stage`: [stage] (an empty set) and [stage, …].
    metrics.addDimensions({});
    metrics.addDimensions(group.dimensions);
  }
  for (const [name, { unit, values }] of group.values) {
    for (const value of values) metrics.addMetric(name, unit, value);
  }
  let line: string;
  try {
    line = JSON.stringify(metrics.serializeMetrics());
  } finally {
    metrics.clearMetrics();
    metrics.clearDimensions();
  }
  if (sink) sink(line);
  else process.stdout.write(`${line}\n`);
}

/**
 * Sends the EMF lines to `collect` instead of stdout (the local stack's collector, a test's), until
 * called again with undefined. Collected lines are given whether or not `POWERTOOLS_METRICS_DISABLED`
 * is set (it silences stdout only).
 */
export function sendMetricsTo(collect: MetricsSink | undefined): void {
  sink = collect;
}
