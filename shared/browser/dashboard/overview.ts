/** Overview: volume and authorization rate over time per gateway configuration (GET /statistics), as uPlot charts. */
import { useEffect, useRef, useState } from "preact/hooks";
import type uPlot from "uplot";
import type { Json } from "./api.ts";
import { Field, html, Loaded, Section, Table, useLoad } from "./ui.ts";

interface Range {
  hours: number;
  interval: "hour" | "day";
  label: string;
}
const WEEK: Range = { hours: 24 * 7, interval: "day", label: "Last 7 days" };
const RANGES: Record<string, Range> = {
  day: { hours: 24, interval: "hour", label: "Last 24 hours" },
  week: WEEK,
  month: { hours: 24 * 30, interval: "day", label: "Last 30 days" },
};

/** The charts' script, loaded once when the first chart is drawn (its address is beside the app's). */
let charts: Promise<typeof uPlot> | undefined;
function loadCharts(): Promise<typeof uPlot> {
  const address = new URL("dashboard-charts.js", import.meta.url).href;
  charts ??= (import(/* @vite-ignore */ address) as Promise<{ uPlot: typeof uPlot }>).then(
    (module) => module.uPlot,
  );
  return charts;
}

/** Colours told apart by people with common colour blindness (Okabe–Ito). */
const COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];

function Chart(props: {
  /** The value axis's top, fixed (a rate's 100 %); by default fitted to the data. */
  max?: number;
  title: string;
  times: number[];
  series: { label: string; values: (number | null)[] }[];
  unit: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || props.times.length === 0) return;
    let plot: uPlot | undefined;
    let gone = false;
    const resize = () => plot?.setSize({ width: Math.max(280, element.clientWidth), height: 240 });
    loadCharts().then((UPlot) => {
      if (gone) return;
      plot = new UPlot(
        {
          width: Math.max(280, element.clientWidth),
          height: 240,
          series: [
            {},
            ...props.series.map((line, index) => ({
              label: line.label,
              stroke: COLOURS[index % COLOURS.length],
              width: 2,
              value: (_: uPlot, value: number | null) =>
                value == null ? "—" : `${value.toFixed(2)} ${props.unit}`,
            })),
          ],
          axes: [{}, { values: (_: uPlot, ticks: number[]) => ticks.map((tick) => `${tick}`) }],
          ...(props.max === undefined
            ? {}
            : { scales: { y: { range: [0, props.max] as [number, number] } } }),
        },
        [props.times, ...props.series.map((line) => line.values)] as uPlot.AlignedData,
        element,
      );
    });
    addEventListener("resize", resize);
    return () => {
      gone = true;
      removeEventListener("resize", resize);
      plot?.destroy();
    };
  }, [props.times, props.series]);
  return html`<figure class="chart">
    <figcaption>${props.title}</figcaption>
    <div ref=${box} role="img" aria-label=${`${props.title}: chart; the table below gives the same figures`}></div>
  </figure>`;
}

export function Overview() {
  const [range, setRange] = useState("week");
  const [currency, setCurrency] = useState("");
  const [now] = useState(() => Date.now());
  const chosen = RANGES[range] ?? WEEK;
  const from = new Date(now - chosen.hours * 3_600_000).toISOString();
  const load = useLoad(
    `statistics?from=${encodeURIComponent(from)}&to=${encodeURIComponent(new Date(now).toISOString())}&interval=${chosen.interval}`,
  );
  return html`<h1>Overview</h1>
    <form class="filters" onSubmit=${(event: Event) => event.preventDefault()}>
      <${Field} label="Period" name="range" value=${range} onInput=${setRange}
        options=${Object.entries(RANGES).map(([key, r]): [string, string] => [key, r.label])} />
    </form>
    <${Loaded} load=${load}>${(data: Json) => {
      const series: Json[] = data.statistics.series;
      const starts = [
        ...new Set(series.flatMap((s) => s.buckets.map((b: Json) => b.start as string))),
      ].sort();
      const currencies = [
        ...new Set(series.flatMap((s) => s.buckets.flatMap((b: Json) => Object.keys(b.amounts)))),
      ].sort();
      const shown = currency && currencies.includes(currency) ? currency : (currencies[0] ?? "");
      const bucketOf = (s: Json, start: string) => s.buckets.find((b: Json) => b.start === start);
      const times = starts.map((start) => Date.parse(start) / 1000);
      const volume = series.map((s) => ({
        label: s.gateway_configuration_id,
        values: starts.map((start) => Number(bucketOf(s, start)?.amounts[shown] ?? 0)),
      }));
      const rate = series.map((s) => ({
        label: s.gateway_configuration_id,
        values: starts.map((start) => {
          const b = bucketOf(s, start);
          const decided = b ? b.approved + b.declined : 0;
          return decided ? (100 * b.approved) / decided : null;
        }),
      }));
      const totals = series.map((s) => {
        const sum = (field: string) => s.buckets.reduce((n: number, b: Json) => n + b[field], 0);
        const approved = sum("approved");
        const declined = sum("declined");
        const amount = s.buckets.reduce((n: number, b: Json) => n + Number(b.amounts[shown] ?? 0), 0);
        return [
          s.gateway_configuration_id,
          String(sum("attempts")),
          String(approved),
          String(declined),
          String(sum("failed")),
          approved + declined ? `${((100 * approved) / (approved + declined)).toFixed(1)} %` : "—",
          `${amount.toFixed(2)} ${shown}`,
        ];
      });
      if (series.length === 0) return html`<p class="muted">No authorization attempt in this period.</p>`;
      return html`
        ${
          currencies.length > 1
            ? html`<${Field} label="Volume currency" name="currency" value=${shown} onInput=${setCurrency}
          options=${currencies.map((c): [string, string] => [c, c])} />`
            : null
        }
        <div class="charts">
          <${Chart} title=${`Volume (${shown})`} times=${times} series=${volume} unit=${shown} />
          <${Chart} title="Authorization rate (%)" times=${times} series=${rate} unit="%" max=${100} />
        </div>
        <${Section} title="Per gateway configuration">
          <${Table} label="Authorization attempts per gateway configuration"
            head=${["Configuration", "Attempts", "Approved", "Declined", "Failed", "Authorization rate", "Volume"]} rows=${totals} />
        <//>`;
    }}<//>`;
}
