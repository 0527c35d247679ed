/**
 * The business metrics on this machine: the local stack collects the EMF documents its functions
 * print (`shared/observability/metrics.ts`) and adds them up as CloudWatch would, per metric and
 * dimension set: Sum, SampleCount, Min, Max (and Average). `GET /local/metrics` on the local API
 * serves them as plain text, one series a line; it is a page of the local stack only, no route of
 * the deployment.
 *
 *   Requests{route="POST /invoices",stage="local"} sum=3 count=3 avg=1 min=1 max=1 Count
 *
 * `parseMetricsPage` reads that page back (the load bench, the tests).
 */
export const LOCAL_METRICS_PATH = "/local/metrics";

export interface MetricSeries {
  metric: string;
  unit: string;
  /** The dimension set's names and values, `stage` included. */
  dimensions: Record<string, string>;
  sum: number;
  count: number;
  min: number;
  max: number;
}

export interface LocalMetrics {
  /** Takes one EMF line (a `MetricsSink`). */
  collect(emfLine: string): void;
  series(): MetricSeries[];
  /** The plain-text page. */
  page(): string;
}

interface EmfDocument {
  _aws?: {
    CloudWatchMetrics?: Array<{ Dimensions?: string[][]; Metrics?: Array<{ Name: string; Unit?: string }> }>;
  };
  [field: string]: unknown;
}

export function createLocalMetrics(): LocalMetrics {
  const all = new Map<string, MetricSeries>();

  function add(metric: string, unit: string, dimensions: Record<string, string>, values: number[]) {
    const key = seriesKey(metric, dimensions);
    let series = all.get(key);
    if (!series) {
      series = { metric, unit, dimensions, sum: 0, count: 0, min: Infinity, max: -Infinity };
      all.set(key, series);
    }
    for (const value of values) {
      series.sum += value;
      series.count += 1;
      series.min = Math.min(series.min, value);
      series.max = Math.max(series.max, value);
    }
  }

  /** Copies: a reading does not change as more is collected. */
  function series() {
    return [...all.values()]
      .map((one) => ({ ...one, dimensions: { ...one.dimensions } }))
      .sort((a, b) => seriesKey(a.metric, a.dimensions).localeCompare(seriesKey(b.metric, b.dimensions)));
  }

  return {
    collect(emfLine) {
      const document = JSON.parse(emfLine) as EmfDocument;
      for (const directive of document._aws?.CloudWatchMetrics ?? []) {
        for (const names of directive.Dimensions ?? [[]]) {
          const dimensions = Object.fromEntries(names.map((name) => [name, String(document[name])]));
          for (const { Name, Unit } of directive.Metrics ?? []) {
            const value = document[Name];
            add(Name, Unit ?? "None", dimensions, (Array.isArray(value) ? value : [value]) as number[]);
          }
        }
      }
    },
    series,
    page() {
      const lines = [
        "# The business metrics of this local stack since it started (namespace PaymentApi): the EMF",
        "# documents its functions printed, added up per metric and dimension set as CloudWatch does.",
        "# metric{dimensions} sum count avg min max unit",
        ...series().map(
          (one) =>
            `${one.metric}{${labels(one.dimensions)}} sum=${figure(one.sum)} count=${one.count} ` +
            `avg=${figure(one.sum / one.count)} min=${figure(one.min)} max=${figure(one.max)} ${one.unit}`,
        ),
      ];
      return `${lines.join("\n")}\n`;
    },
  };
}

function seriesKey(metric: string, dimensions: Record<string, string>): string {
  return `${metric}{${labels(dimensions)}}`;
}

function labels(dimensions: Record<string, string>): string {
  return Object.keys(dimensions)
    .sort()
    .map((name) => `${name}=${JSON.stringify(dimensions[name])}`)
    .join(",");
}

function figure(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}

const LINE = /^(\w+)\{(.*)\} sum=(\S+) count=(\d+) avg=\S+ min=(\S+) max=(\S+) (\w+)$/;
const LABEL = /(\w+)=("(?:[^"\\]|\\.)*")/g;

/** The series of a `GET /local/metrics` page. */
export function parseMetricsPage(page: string): MetricSeries[] {
  return page.split("\n").flatMap((line) => {
    const match = LINE.exec(line);
    if (!match) return [];
    const [, metric, labelText, sum, count, min, max, unit] = match as unknown as string[];
    const dimensions: Record<string, string> = {};
    for (const [, name, quoted] of (labelText as string).matchAll(LABEL)) {
      dimensions[name as string] = JSON.parse(quoted as string) as string;
    }
    return [
      {
        metric: metric as string,
        unit: unit as string,
        dimensions,
        sum: Number(sum),
        count: Number(count),
        min: Number(min),
        max: Number(max),
      },
    ];
  });
}

/**
 * The series of `metric` with exactly these dimensions (`stage` included), or a series of zeros
 * when none was recorded.
 */
export function seriesOf(
  all: readonly MetricSeries[],
  metric: string,
  dimensions: Record<string, string>,
): MetricSeries {
  const wanted = seriesKey(metric, dimensions);
  return (
    all.find((one) => seriesKey(one.metric, one.dimensions) === wanted) ?? {
      metric,
      unit: "None",
      dimensions,
      sum: 0,
      count: 0,
      min: 0,
      max: 0,
    }
  );
}
