/**
 * Bundles and cold start: the size of every Lambda bundle, and what loading a representative few
 * costs in a fresh `node` process against a bare bundle that only builds a `DynamoDBDocumentClient`
 * (the floor of any function here), with and without `--enable-source-maps`, and what that flag
 * costs an error's stack trace. Every bundle is built with the deployment options
 * (`lib/bundling.ts`). Prints nothing itself: `run.ts` prints the tables; `tsx bench/bundles.ts`
 * prints them alone.
 *
 * Each figure is the median of `runs` processes, the bundles taken in turn in every round so a
 * drift of the machine's speed touches them all alike; the baseline is measured in the same run.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { bundleSize, handlerBuildOptions, projectRoot } from "../lib/bundling.ts";
import { allHandlers, handlerEntry } from "../lib/topology.ts";
import { formatTable, percentile } from "./stats.ts";

/**
 * Issue 23's business metrics put Powertools Metrics (`shared/observability/metrics.ts`) in every
 * function: 11.1 to 13.4 KiB more in each of the 147 bundles (median 11.8), measured on the same
 * commit with and without them. The limit and each exception moved by 15 KiB for it.
 *
 * Issue 24's dashboard calls the API with a person's session (`shared/dashboard/session-auth.ts`):
 * every API function reads a session cookie, checks its CSRF token and the role × action table of
 * every route (`shared/dashboard/roles.ts`, 7 KiB of it), and writes a change's audit entry: 12.2 KiB
 * more in `invoices/capture` (290.5 → 303.0 KB) and `customers/get` (151.3 → 163.9 KB), measured on
 * the same tree with and without it. The limit and each exception of an API function moved by 13 KiB.
 */
export const BUNDLE_LIMIT_KIB = 308;
/**
 * Functions allowed beyond the limit, each with its own limit and why. The SFTP delivery of exports
 * carries the SSH client (ssh2, about 245 KiB of it even without ssh2's server, and 47 KiB of the
 * libraries its key parser uses; 359 KiB in all, measured when the exception was made): it is a queue worker
 * run about once a day per environment that delivers, on no request's path, and is the only function
 * that loads it (`shared/exports/deliver.ts`).
 *
 * The sandbox clock's advance runs every kind of job of its environment in its own request
 * (`shared/sandbox/clock.ts`): captures, renewals and the daily close (payouts, the providers'
 * payouts, the day's exports), so it carries all their code. It serves sandbox keys only, never a
 * payment's path.
 *
 * Making or changing a subscription saves the card as a token and charges its first iteration, so
 * these two carry the token's verification and the whole authorization path with every provider's
 * connector (Stripe's and Adyen's about 25 KiB, inlined though loaded on demand). Issue 21 added
 * 3DS without payment and payouts to cards to the payment core, gift cards to the sandbox, and the
 * settlement lines of payouts: 267 → 286 KiB. Issue 22 added coupons (a subscription made or changed
 * with `coupon_id` redeems one) and the billing arithmetic (charges, prorations, discounts):
 * 286 → 293 and 295 KiB. Loading the providers' connectors as chunks of their own is the way back
 * under 280 (issue 26, the request's overhead).
 *
 * Moving a trial's end (`trial_end_at` on `PUT /subscriptions/{id}`, issue 24) took
 * `subscriptions/update` from 328.2 to 330.5 KiB.
 *
 * The dashboard's passkey steps carry `@simplewebauthn/server` (with the ASN.1 and X.509 parsers
 * its attestation formats need, about 260 KiB): only these four sign-in and enrolment functions
 * load it, on no API request's path (`shared/dashboard/passkeys.ts`).
 */
export const BUNDLE_LIMIT_EXCEPTIONS_KIB: Readonly<Record<string, number>> = {
  "exports/deliver": 385,
  "sandbox/advance-clock": 328,
  "subscriptions/create": 328,
  "subscriptions/update": 333,
  "dashboard/passkeys-options": 356,
  "dashboard/passkeys-register": 392,
  "dashboard/sign-in-passkey-options": 356,
  "dashboard/sign-in-passkey": 375,
};

/** The limit of one handler's bundle. */
export const bundleLimitKib = (handler: string) => BUNDLE_LIMIT_EXCEPTIONS_KIB[handler] ?? BUNDLE_LIMIT_KIB;
/** Module load of a representative bundle, as a multiple of the bare DynamoDB client's. */
export const LOAD_RATIO_LIMIT = 1.3;

/** Always measured beside the largest bundle: a plain read, and a payment. */
export const REPRESENTATIVE_HANDLERS = ["customers/get", "invoices/capture"] as const;

const BARE = "bare DynamoDBDocumentClient";
const BARE_SOURCE = `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
export const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}));
`;

/** Frames of the probe's error, all in the bundle (Node keeps 10 by default). */
const PROBE_DEPTH = 10;
/** Stacks formatted after the first one, to time one in a warm process. */
const WARM_STACKS = 50;

export interface BenchTable {
  title: string;
  header: string[];
  rows: string[][];
}

export interface BundleBenchOptions {
  /** Processes per bundle and setting (median). */
  runs?: number;
  /** Measured beside the largest bundle and the bare baseline. */
  handlers?: readonly string[];
}

/** What one fresh process measured, in milliseconds. */
interface Probe {
  /** `await import(bundle)`: wall time, */
  load: number;
  /** and the process's CPU time meanwhile, which other load on the machine disturbs less. */
  loadCpu: number;
  /** The first `error.stack` of the process (a source map is read then, if at all). */
  firstStack?: number;
  /** One more `error.stack`, averaged over `WARM_STACKS`. */
  warmStack?: number;
}

export async function benchBundles(options: BundleBenchOptions = {}): Promise<BenchTable[]> {
  const runs = options.runs ?? Number(process.env.BENCH_LOAD_RUNS ?? 11);
  const sizes = await Promise.all(
    allHandlers().map(async (handler) => ({ handler, bytes: await bundleSize(handlerEntry(handler)) })),
  );
  sizes.sort((a, b) => b.bytes - a.bytes);
  const largest = sizes[0]?.handler;
  const measured = [
    ...new Set([...(largest ? [largest] : []), ...(options.handlers ?? REPRESENTATIVE_HANDLERS)]),
  ];

  const dir = await mkdtemp(join(tmpdir(), "payment-api-bundles-"));
  try {
    // The bundles import `@aws-sdk/*`, which the runtime provides: here, the project's packages.
    await symlink(join(projectRoot, "node_modules"), join(dir, "node_modules"), "dir");
    const targets = [
      await bundleTarget(dir, BARE, BARE_SOURCE),
      ...(await Promise.all(measured.map((handler) => bundleTarget(dir, handler)))),
    ];
    for (let round = 0; round < runs; round++) {
      for (const target of targets) {
        target.plain.push(await probe(target.file, []));
        target.withMaps.push(await probe(target.file, ["--enable-source-maps"]));
        target.stacks.plain.push(await probe(target.probeFile, []));
        target.stacks.withMaps.push(await probe(target.probeFile, ["--enable-source-maps"]));
      }
    }
    return [sizeTable(sizes), loadTable(targets, runs), sourceMapTable(targets, runs)];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A bundle measured, and what its processes measured. */
interface Target {
  name: string;
  bytes: number;
  mapBytes: number;
  file: string;
  /** The same bundle plus a function that throws from `PROBE_DEPTH` frames inside it. */
  probeFile: string;
  plain: Probe[];
  withMaps: Probe[];
  stacks: { plain: Probe[]; withMaps: Probe[] };
}

/** Builds `handler` (or the bare baseline's `source`) and its probe into folders of `dir`. */
async function bundleTarget(dir: string, name: string, source?: string): Promise<Target> {
  const slug = name.replace(/[^a-z0-9]+/gi, "-");
  const entry = source === undefined ? join(projectRoot, handlerEntry(name)) : join(dir, `${slug}.ts`);
  if (source !== undefined) await writeFile(entry, source);
  const outdir = join(dir, slug);
  await build(handlerBuildOptions(entry, outdir));

  const probeEntry = join(dir, `${slug}-probe.ts`);
  await writeFile(
    probeEntry,
    `export * from ${JSON.stringify(entry)};
export function probeError(depth: number): never {
  if (depth === 0) throw new Error("probe");
  return probeError(depth - 1);
}
`,
  );
  await build(handlerBuildOptions(probeEntry, join(outdir, "probe")));

  const file = join(outdir, "index.mjs");
  return {
    name,
    file,
    probeFile: join(outdir, "probe", "index.mjs"),
    bytes: (await stat(file)).size,
    mapBytes: (await stat(`${file}.map`)).size,
    plain: [],
    withMaps: [],
    stacks: { plain: [], withMaps: [] },
  };
}

const run = promisify(execFile);

/**
 * Loads `file` in a fresh `node` with `flags`, and throws and formats errors from inside it when it
 * is a probe. The environment is a function's own: the region, no `NODE_OPTIONS` but `flags`.
 */
async function probe(file: string, flags: string[]): Promise<Probe> {
  const script = `
const cpu = process.cpuUsage();
const started = performance.now();
const bundle = await import(${JSON.stringify(pathToFileURL(file).href)});
const used = process.cpuUsage(cpu);
const figures = { load: performance.now() - started, loadCpu: (used.user + used.system) / 1000 };
const stack = () => {
  const begun = performance.now();
  try { bundle.probeError(${PROBE_DEPTH}); } catch (error) { if (!error.stack) throw error; }
  return performance.now() - begun;
};
if (typeof bundle.probeError === "function") {
  figures.firstStack = stack();
  let total = 0;
  for (let i = 0; i < ${WARM_STACKS}; i++) total += stack();
  figures.warmStack = total / ${WARM_STACKS};
}
process.stdout.write(JSON.stringify(figures));
`;
  const { stdout } = await run(process.execPath, [...flags, "--input-type=module", "--eval", script], {
    env: {
      PATH: process.env.PATH ?? "",
      AWS_REGION: "eu-west-1",
      AWS_LAMBDA_FUNCTION_NAME: "bench",
      TABLE_NAME: "bench",
    },
  });
  return JSON.parse(stdout) as Probe;
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const ms = (value: number) => value.toFixed(1);
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const medianOf = (probes: Probe[], figure: keyof Probe) =>
  median(probes.map((probe) => probe[figure] ?? NaN));

function sizeTable(sizes: { handler: string; bytes: number }[]): BenchTable {
  const over = sizes.filter((size) => size.bytes > bundleLimitKib(size.handler) * 1024).length;
  return {
    title: `Lambda bundles (minified ESM, @aws-sdk/* provided by the runtime), largest first: ${over} of ${sizes.length} over ${BUNDLE_LIMIT_KIB} KiB`,
    header: ["handler", "KiB"],
    rows: sizes.map(({ handler, bytes }) => [handler, kib(bytes)]),
  };
}

/** Each bundle's load against the baseline's of the same round, so a drift of the machine cancels out. */
function loadTable(targets: Target[], runs: number): BenchTable {
  const [bare] = targets;
  const ratio = (target: Target, figure: "load" | "loadCpu") =>
    median(target.plain.map((probe, round) => probe[figure] / (bare?.plain[round]?.[figure] ?? NaN)));
  return {
    title: `Module load: \`await import(bundle)\` in a fresh node ${process.version}, median of ${runs}, against the ${BARE} of the same round (limit ${LOAD_RATIO_LIMIT}x)`,
    header: ["bundle", "KiB", "load ms", "vs bare", "CPU ms", "CPU vs bare"],
    rows: targets.map((target) => [
      target.name,
      kib(target.bytes),
      ms(medianOf(target.plain, "load")),
      `${ratio(target, "load").toFixed(2)}x`,
      ms(medianOf(target.plain, "loadCpu")),
      `${ratio(target, "loadCpu").toFixed(2)}x`,
    ]),
  };
}

function sourceMapTable(targets: Target[], runs: number): BenchTable {
  return {
    title: `--enable-source-maps: module load, and the first and a later \`error.stack\` of ${PROBE_DEPTH} frames in the bundle, without / with the flag (median of ${runs})`,
    header: ["bundle", "map KiB", "load ms", "first stack ms", "later stack ms"],
    rows: targets.map((target) => [
      target.name,
      kib(target.mapBytes),
      `${ms(medianOf(target.plain, "load"))} / ${ms(medianOf(target.withMaps, "load"))}`,
      `${ms(medianOf(target.stacks.plain, "firstStack"))} / ${ms(medianOf(target.stacks.withMaps, "firstStack"))}`,
      `${medianOf(target.stacks.plain, "warmStack").toFixed(3)} / ${medianOf(target.stacks.withMaps, "warmStack").toFixed(3)}`,
    ]),
  };
}

/** A table of this bench as text: its title, then the table. */
export function formatBenchTable({ title, header, rows }: BenchTable): string {
  return [title, "", formatTable(header, rows)].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const table of await benchBundles()) console.log(`\n${formatBenchTable(table)}`);
}
