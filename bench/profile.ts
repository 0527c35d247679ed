/**
 * `npm run -s bench:profile`: where a request's CPU time goes. Starts the local stack in-process, as
 * `npm start` does (its stream, queue and scheduler pollers included), drives a read, a create and
 * an authorize (`PROFILE_REQUESTS` each, default 1,000; 4 in flight) through its HTTP API with the
 * benches' merchant client, and the read's and the create's Lambda handlers alone (the API Gateway
 * event in, in-process), each under V8's sampling profiler. Every sample is given to the innermost
 * frame of its stack whose source file belongs to a part (below), and the table prints each part's CPU
 * milliseconds per request. Parts marked "local" exist only in the local stack; the rest a deployed
 * function pays too. `PROFILE_DIR` keeps the `.cpuprofile` files (for Chrome's DevTools).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack } from "../lib/local/start.ts";
import { merchantClient } from "./client.ts";
import { handlerAlone } from "./handler-alone.ts";
import { formatTable } from "./stats.ts";

const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 1000);
const CONCURRENCY = 4;
const WARMUP = 200;

/** A part of the path, and what a source file's URL must contain to belong to it; first match wins. */
const PARTS: ReadonlyArray<{ part: string; local?: true; files: RegExp }> = [
  { part: "the bench's merchant client", local: true, files: /\/bench\// },
  { part: "round-trip counter (only when read)", local: true, files: /round-trips\.ts|node:async_hooks/ },
  {
    part: "local API: HTTP server, event, invoke",
    local: true,
    files: /lib\/local\/(http-server|lambda)\.ts|node:_http_server|node:_http_incoming/,
  },
  {
    part: "stream, queue and scheduler pollers",
    local: true,
    files: /lib\/local\/|node_modules\/fauxqs|node:sqlite|functions\/(webhooks|scheduler|jobs)\//,
  },
  { part: "AWS SDK (DynamoDB client, its HTTP)", files: /node_modules\/(@aws-sdk|@smithy|@aws-crypto)\// },
  { part: "middy (middleware chain)", files: /node_modules\/@middy\// },
  {
    part: "logging and metrics (Powertools)",
    files: /node_modules\/@aws-lambda-powertools\/|shared\/observability\//,
  },
  { part: "authentication", files: /shared\/http\/auth\.ts|shared\/projects\// },
  {
    part: "parsing and validation",
    files: /shared\/http\/input\.ts|shared\/validation\/|node_modules\/(zod|qs|big\.js)\//,
  },
  { part: "expansion", files: /shared\/expansion\// },
  { part: "HTTP core: envelope, answer serialization", files: /shared\/http\// },
  { part: "domain logic and table access", files: /\/(shared|functions)\// },
];
const GC = "garbage collection";
const NODE = "node internals (sockets, HTTP parsing, timers)";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** CPU microseconds per part (idle left out). */
function attribute(profile: CpuProfile): Map<string, number> {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const partOfNode = new Map<number, string | null>();
  const partOf = (id: number): string | null => {
    const known = partOfNode.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id) as ProfileNode;
    const { url, functionName } = node.callFrame;
    let part: string | null;
    // Idle, and the profiler's own frames (taking and stopping the profile), are left out.
    if (functionName === "(idle)" || url === "node:inspector") part = null;
    else if (functionName === "(garbage collector)") part = GC;
    else {
      const own = url ? PARTS.find((candidate) => candidate.files.test(url))?.part : undefined;
      const up = parent.get(id);
      part = own ?? (up === undefined ? NODE : (partOf(up) ?? NODE));
    }
    partOfNode.set(id, part);
    return part;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const part = partOf(id);
    if (part) totals.set(part, (totals.get(part) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  return totals;
}

const dataDir = await mkdtemp(join(tmpdir(), "payment-api-profile-"));
const keep = process.env.PROFILE_DIR;
const stack = await startLocalStack({ port: 0, dataDir, log: () => {} });
const { project_id, private_key } = stack.credentials.sandbox;
const call = merchantClient(stack.url, project_id, private_key);
const authorization = `Basic ${Buffer.from(`${project_id}:${private_key}`).toString("base64")}`;
const customer = { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com", currency: "EUR" };

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });

/** Runs `operation` `WARMUP` times, then `REQUESTS` times under the profiler, 4 in flight. */
async function profiled(name: string, operation: (i: number) => Promise<unknown>) {
  for (let i = 0; i < WARMUP; i++) await operation(REQUESTS + i);
  await session.post("Profiler.start");
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) await operation(next++);
    }),
  );
  const wallMs = performance.now() - started;
  const { profile } = await session.post("Profiler.stop");
  if (keep)
    await writeFile(join(keep, `${name.replace(/[^a-z0-9]+/gi, "-")}.cpuprofile`), JSON.stringify(profile));
  return { name, wallMs, parts: attribute(profile as unknown as CpuProfile) };
}

try {
  const ids: string[] = [];
  for (let i = 0; i < 100; i++) ids.push((await call("POST", "/customers", customer)).customer.id);
  const card = (await call("POST", "/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .card.id;
  const invoices: string[] = [];
  for (let i = 0; i < REQUESTS + WARMUP; i++) {
    invoices.push(
      (await call("POST", "/invoices", { name: "Order", amount: "10.00", currency: "EUR" })).invoice.id,
    );
  }

  const runs = [
    await profiled("GET /customers/{id}", (i) => call("GET", `/customers/${ids[i % ids.length]}`)),
    await profiled(
      "GET /customers/{id}, handler alone",
      await handlerAlone((i) => ({
        routeKey: "GET /customers/{customer_id}",
        path: `/customers/${ids[i % ids.length]}`,
        authorization,
      })),
    ),
    await profiled("POST /customers", () => call("POST", "/customers", customer)),
    await profiled(
      "POST /customers, handler alone",
      await handlerAlone({ routeKey: "POST /customers", path: "/customers", body: customer, authorization }),
    ),
    await profiled("POST /invoices/{id}/authorize", (i) =>
      call("POST", `/invoices/${invoices[i]}/authorize`, { source: card }),
    ),
  ];

  const order = [...PARTS.map(({ part }) => part), NODE, GC];
  const local = new Set(PARTS.filter((part) => part.local).map(({ part }) => part));
  const perRequest = (micros: number | undefined) => ((micros ?? 0) / 1000 / REQUESTS).toFixed(3);
  console.log(
    `\nCPU ms per request by part of the path (${REQUESTS} requests each, ${CONCURRENCY} in flight, ` +
      `after ${WARMUP} warm-up; Node ${process.version}; idle left out)\n`,
  );
  console.log(
    formatTable(
      ["part", ...runs.map((run) => run.name)],
      [
        ...order.map((part) => [
          local.has(part) ? `${part} [local]` : part,
          ...runs.map((run) => perRequest(run.parts.get(part))),
        ]),
        [
          "total CPU",
          ...runs.map((run) => perRequest([...run.parts.values()].reduce((sum, micros) => sum + micros, 0))),
        ],
        [
          "what a function pays (no [local] part)",
          ...runs.map((run) =>
            perRequest(
              [...run.parts]
                .filter(([part]) => !local.has(part))
                .reduce((sum, [, micros]) => sum + micros, 0),
            ),
          ),
        ],
        [
          "wall ms per request, 4 in flight",
          ...runs.map((run) => ((run.wallMs * CONCURRENCY) / REQUESTS).toFixed(3)),
        ],
      ],
    ),
  );
} finally {
  session.disconnect();
  await stack.stop();
  await rm(dataDir, { recursive: true, force: true });
}
