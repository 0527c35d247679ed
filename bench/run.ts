/**
 * `npm run bench`, first part: latency, throughput and DynamoDB round trips per request of the API
 * on the local stack, beside the raw DynamoDB Local latency measured in the same run from the same
 * process (so the ratio says what the API adds on top of its database). Prints figures; asserts
 * nothing. `bench/bundles.ts` (bundle sizes, module load) and `bench/load.ts` (the 60-second mixed
 * load) follow it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack } from "../lib/local/start.ts";
import { merchantClient } from "./client.ts";
import { handlerAlone } from "./handler-alone.ts";
import { type Figures, formatTable, measure, measureSideBySide } from "./stats.ts";
import { benchWebhooks } from "./webhooks.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const WARMUP = 50;

const dataDir = await mkdtemp(join(tmpdir(), "payment-api-bench-"));
/** The round trips the metered requests (a row's warm-up) made on their own path. */
const onPath = { requests: 0, calls: 0, sequential: 0, provider: 0 };
/**
 * Counting a request's round trips follows its promises through an AsyncLocalStorage, whose hooks
 * every promise of the process then pays: a row's warm-up requests are counted, its timed ones not.
 */
let metering = true;
const stack = await startLocalStack({
  port: 0,
  dataDir,
  log: () => {},
  roundTrips: (_route, trips) => {
    onPath.requests += 1;
    onPath.calls += trips.calls;
    onPath.sequential += trips.sequential;
    onPath.provider += trips.providerCalls;
  },
  meteringRoundTrips: () => metering,
});
// Imported after the stack set the environment the shared code reads at import.
const { dynamo, dynamoCallCount } = await import("../shared/db/client.ts");
const { stopMeasuringRoundTrips } = await import("../shared/db/round-trips.ts");
/** Timed requests run without the counter's hooks (which every promise pays once they are on). */
const stopMetering = () => {
  metering = false;
  stopMeasuringRoundTrips();
};
const { GetCommand, PutCommand, TransactWriteCommand } = await import("@aws-sdk/lib-dynamodb");
const { ulid } = await import("ulid");

const { project_id, private_key } = stack.credentials.sandbox;
/** A merchant's server: JSON over kept-alive HTTP connections, as `bench/load.ts` calls too. */
const call = merchantClient(stack.url, project_id, private_key);
const authorization = `Basic ${Buffer.from(`${project_id}:${private_key}`).toString("base64")}`;

interface Row {
  name: string;
  figures: Figures;
  /** Per request: commands sent on the request's path, how many of them it waited for in turn, and the background's. */
  trips?: { calls: number; sequential: number; provider: number; background: number };
}
const rows: Row[] = [];

interface SideBySideRow {
  group: string;
  name: string;
  figures: Figures;
  /** Against the group's raw call: p50 and requests per second. */
  vsRaw?: { p50: number; rps: number };
}
const sideBySideRows: SideBySideRow[] = [];

/**
 * Operations measured side by side (`measureSideBySide`), each warmed up first; the one marked
 * `baseline` is the raw DynamoDB call the others are set against.
 */
async function sideBySide(
  group: string,
  entries: Array<{ name: string; operation: (i: number) => Promise<unknown>; baseline?: boolean }>,
) {
  stopMetering();
  for (const { operation } of entries) for (let i = 0; i < WARMUP; i++) await operation(i);
  const figures = await measureSideBySide(
    REQUESTS,
    CONCURRENCY,
    entries.map((entry) => entry.operation),
  );
  metering = true;
  const baseline = figures[entries.findIndex((entry) => entry.baseline)] as Figures;
  entries.forEach((entry, index) => {
    const own = figures[index] as Figures;
    sideBySideRows.push({
      group,
      name: entry.name,
      figures: own,
      ...(entry.baseline ? {} : { vsRaw: { p50: own.p50 / baseline.p50, rps: own.rps / baseline.rps } }),
    });
  });
}
let renewalRow:
  | {
      renewals: number;
      charged: number;
      advances: number;
      msPerRenewal: number;
      callsPerRenewal: number;
      sequentialPerRenewal: number;
      providerPerRenewal: number;
    }
  | undefined;

/**
 * Measures an operation and counts the DynamoDB round trips it makes per request: on the request's
 * own path (what the caller waits for; counted over the warm-up, which runs metered), and in the
 * background (stream fan-out, queue workers) over the warm-up and the timed requests.
 */
async function bench(name: string, operation: (i: number) => Promise<unknown>): Promise<Figures> {
  const callsBefore = dynamoCallCount();
  Object.assign(onPath, { requests: 0, calls: 0, sequential: 0, provider: 0 });
  metering = true;
  for (let i = 0; i < WARMUP; i++) await operation(i);
  stopMetering();
  const figures = await measure(REQUESTS, CONCURRENCY, async (i) => {
    await operation(i);
  });
  metering = true;
  const allCalls = dynamoCallCount() - callsBefore;
  const metered = onPath.requests;
  rows.push({
    name,
    figures,
    ...(metered > 0
      ? {
          trips: {
            calls: onPath.calls / metered,
            sequential: onPath.sequential / metered,
            provider: onPath.provider / metered,
            background:
              (allCalls - ((onPath.calls + onPath.provider) / metered) * (WARMUP + REQUESTS)) /
              (WARMUP + REQUESTS),
          },
        }
      : {}),
  });
  return figures;
}

const customerBody = {
  first_name: "Ada",
  last_name: "Lovelace",
  email: "ada@example.com",
  currency: "EUR",
  metadata: { plan: "gold", source: "bench" },
};

/** A full invoice: two detail lines, shipping, device, risk, tax and metadata. */
const invoiceBody = {
  name: "Order #1042",
  amount: "129.90",
  currency: "EUR",
  statement_descriptor: "ACME SHOP",
  return_url: "https://shop.example.com/return",
  metadata: { order_id: "1042", shipping_amount: "9.90" },
  details: [
    {
      name: "Running shoes",
      type: "product",
      amount: "100.00",
      quantity: 1,
      category: "sport",
      brand: "Acme",
    },
    { name: "Socks", type: "product", amount: "10.00", quantity: 2, category: "clothing", condition: "new" },
  ],
  shipping: {
    amount: "9.90",
    method: "home",
    delay: "standard",
    address1: "1 Rue de Rivoli",
    city: "Paris",
    zip: "75001",
    country_code: "FR",
    phone_number: "+33123456789",
  },
  device: { channel: "web", ip_address: "203.0.113.7" },
  risk: { score: "12", is_legit: true },
  tax: { amount: "21.65", rate: "20" },
};

/**
 * The input of the first DynamoDB command named `name` that `request` sends (as JSON, to be sent
 * again), of those whose input mentions `naming` if given.
 */
async function commandOf(name: string, request: () => Promise<unknown>, naming = ""): Promise<string> {
  const send = dynamo.send.bind(dynamo);
  let input: unknown;
  dynamo.send = ((command: { constructor: { name: string }; input: unknown }) => {
    if (command.constructor.name === name && JSON.stringify(command.input).includes(naming))
      input ??= command.input;
    return send(command as never);
  }) as typeof dynamo.send;
  try {
    await request();
  } finally {
    dynamo.send = send;
  }
  if (!input) throw new Error(`The request sent no ${name}`);
  return JSON.stringify(input);
}

/** Captured items with every ULID in them (ids, keys) replaced by a fresh one, so each write is new. */
function underFreshIds(items: string): never[] {
  const fresh = new Map<string, string>();
  return JSON.parse(
    items.replace(/[0-9A-HJKMNP-TV-Z]{26}/g, (id) => {
      if (!fresh.has(id)) fresh.set(id, ulid());
      return fresh.get(id) as string;
    }),
  );
}

try {
  const tableName = stack.tableName;
  const ids: string[] = [];
  for (let i = 0; i < 100; i++) {
    ids.push(((await call("POST", "/customers", customerBody)).customer as { id: string }).id);
  }

  // What the API adds to the DynamoDB calls it needs, side by side in rotating turns (below): the
  // raw calls from this process, the route's Lambda handler alone (the API Gateway event in,
  // in-process: what a deployed function adds), and the request through the local API over HTTP.
  // A create's raw transaction is the very items one POST /customers writes (the resource with its
  // index keys, its count, its event in the outbox, the events' count), taken from the wire and sent
  // again under fresh ids; a read's raw GetItem is the very one GET /customers/{id} sends, for each
  // of the same 100 customers.
  const createInput = await commandOf("TransactWriteCommand", () => call("POST", "/customers", customerBody));
  const createItems = JSON.stringify(JSON.parse(createInput).TransactItems);
  const customerGets: string[] = [];
  for (const id of ids) {
    customerGets.push(await commandOf("GetCommand", () => call("GET", `/customers/${id}`), id));
  }
  const rawItem = (i: number) => ({ pk: `bench#${i}`, sk: "resource", type: "bench", ...customerBody });
  const readAlone = await handlerAlone((i) => ({
    routeKey: "GET /customers/{customer_id}",
    path: `/customers/${ids[i % ids.length]}`,
    authorization,
  }));
  const createAlone = await handlerAlone({
    routeKey: "POST /customers",
    path: "/customers",
    body: customerBody,
    authorization,
  });
  await sideBySide("a create", [
    {
      name: "PutItem (raw, one item)",
      operation: (i) => dynamo.send(new PutCommand({ TableName: tableName, Item: rawItem(i) })),
    },
    {
      name: "TransactWriteItems (raw, a create's 4 items)",
      operation: () => dynamo.send(new TransactWriteCommand({ TransactItems: underFreshIds(createItems) })),
      baseline: true,
    },
    { name: "POST /customers: its Lambda handler alone", operation: createAlone },
    {
      name: "POST /customers through the local API",
      operation: () => call("POST", "/customers", customerBody),
    },
  ]);
  await sideBySide("a read", [
    {
      name: "GetItem (raw, a read's own)",
      operation: (i) =>
        dynamo.send(new GetCommand(JSON.parse(customerGets[i % customerGets.length] as string))),
      baseline: true,
    },
    { name: "GET /customers/{id}: its Lambda handler alone", operation: readAlone },
    {
      name: "GET /customers/{id} through the local API",
      operation: (i) => call("GET", `/customers/${ids[i % ids.length]}`),
    },
  ]);

  await bench("POST /customers", () => call("POST", "/customers", customerBody));
  await bench("POST /customers (Idempotency-Key)", (i) =>
    call("POST", "/customers", customerBody, { "idempotency-key": `bench-${i}-${Date.now()}` }),
  );
  await bench("GET /customers/{id}", (i) => call("GET", `/customers/${ids[i % ids.length]}`));
  await bench("GET /customers?limit=10", () => call("GET", "/customers?limit=10"));
  await bench("POST /invoices (details, shipping)", () =>
    call("POST", "/invoices", { ...invoiceBody, customer_id: ids[0] }),
  );

  const invoiceIds: string[] = [];
  for (let i = 0; i < 100; i++) {
    const created = await call("POST", "/invoices", { ...invoiceBody, customer_id: ids[i % ids.length] });
    invoiceIds.push((created.invoice as { id: string }).id);
  }
  await bench("GET /invoices/{id}?expand[]=customer", (i) =>
    call("GET", `/invoices/${invoiceIds[i % invoiceIds.length]}?expand[]=customer`),
  );

  // Payments: each request pays its own invoice, prepared beforehand (not measured).
  const card = (await call("POST", "/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .card as {
    id: string;
  };
  const freshInvoices = async (count: number) => {
    const created: string[] = [];
    for (let i = 0; i < count; i++) {
      created.push(((await call("POST", "/invoices", invoiceBody)).invoice as { id: string }).id);
    }
    return created;
  };
  /** Hands out each prepared invoice once (warm-up and measured requests share the list). */
  const takeFrom = (list: string[]) => {
    let next = 0;
    return () => list[next++ % list.length];
  };
  const toAuthorize = await freshInvoices(WARMUP + REQUESTS);
  const authorizeNext = takeFrom(toAuthorize);
  const captureNext = takeFrom(toAuthorize);
  await bench("POST /invoices/{id}/authorize", () =>
    call("POST", `/invoices/${authorizeNext()}/authorize`, { source: card.id }),
  );
  // The authorized invoices of the row above are captured in this one.
  await bench("POST /invoices/{id}/capture", () => call("POST", `/invoices/${captureNext()}/capture`, {}));
  const payNext = takeFrom(await freshInvoices(WARMUP + REQUESTS));
  await bench("POST /invoices/{id}/capture (authorize + capture)", () =>
    call("POST", `/invoices/${payNext()}/capture`, { source: card.id }),
  );

  // Native APM: each invoice goes through both steps and its capture, one row each.
  const listed = await call("GET", "/gateway-configurations?filter=native-alternative-payment-methods");
  const [apm] = listed.gateway_configurations as { id: string; gateway_name: string }[];
  const apmSource = `${apm?.id}.${apm?.gateway_name}`;
  const nativeInvoices = await freshInvoices(WARMUP + REQUESTS);
  const [firstStep, secondStep, apmCapture] = [
    takeFrom(nativeInvoices),
    takeFrom(nativeInvoices),
    takeFrom(nativeInvoices),
  ];
  const nativePayment = (invoiceId: string | undefined, values: Record<string, string>) =>
    call("POST", `/invoices/${invoiceId}/native-payment`, {
      gateway_configuration_id: apmSource,
      native_apm: { parameter_values: values },
    });
  await bench("POST /invoices/{id}/native-payment (email → CUSTOMER_INPUT)", () =>
    nativePayment(firstStep(), { email: "native-apm-success@example.com" }),
  );
  await bench("POST /invoices/{id}/native-payment (token → PENDING_CAPTURE)", () =>
    nativePayment(secondStep(), { token: "123456" }),
  );
  await bench("POST /invoices/{id}/capture (native APM)", () =>
    call("POST", `/invoices/${apmCapture()}/capture`, { source: apmSource }),
  );

  // Subscriptions: each request subscribes a customer of its own, with a card (which becomes a
  // customer token), to a monthly plan with a trial (nothing is charged at creation).
  const plan = { name: "Bench", amount: "9.99", currency: "EUR", interval: "1m", trial_period: "1d" };
  await call("POST", "/plans", { ...plan, id: "bench-monthly" });
  const subscriber = async (as: Record<string, string> = {}) => {
    const customer = (await call("POST", "/customers", { first_name: "Ada" }, as)).customer as { id: string };
    const subscriberCard = (
      await call("POST", "/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }, as)
    ).card as { id: string };
    return { customer_id: customer.id, source: subscriberCard.id };
  };
  const subscribers: Array<{ customer_id: string; source: string }> = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) subscribers.push(await subscriber());
  const nextSubscriber = takeFrom(subscribers.map((_, i) => String(i)));
  await bench("POST /subscriptions (card → token, trial)", () =>
    call("POST", "/subscriptions", { ...subscribers[Number(nextSubscriber())], plan_id: "bench-monthly" }),
  );

  // One renewal job end to end (its invoice, the merchant-initiated capture, the next schedule), in
  // an environment of its own whose sandbox clock passes the trial's end: POST /sandbox/clock runs
  // the jobs that became due, as many as fit its time budget, and is called again until none is left.
  const { createProject } = await import("../shared/projects/project.ts");
  const renewing = (await createProject("Bench renewals")).sandbox;
  const renewingAs = {
    authorization: `Basic ${Buffer.from(`${renewing.project_id}:${renewing.private_key}`).toString("base64")}`,
  };
  const RENEWALS = Math.min(REQUESTS, 100);
  await call("POST", "/plans", { ...plan, id: "bench-monthly" }, renewingAs);
  for (let i = 0; i < RENEWALS; i++) {
    await call(
      "POST",
      "/subscriptions",
      { ...(await subscriber(renewingAs)), plan_id: "bench-monthly" },
      renewingAs,
    );
  }
  const clock = (await call("GET", "/sandbox/clock", undefined, renewingAs)).clock as { now: string };
  Object.assign(onPath, { requests: 0, calls: 0, sequential: 0, provider: 0 });
  const renewalStart = performance.now();
  // An advance answers within its time budget: the same request again until nothing is due.
  const advanceTo = new Date(Date.parse(clock.now) + 2 * 24 * 3600 * 1000).toISOString();
  let advances = 0;
  for (let remaining = 1; remaining > 0; advances++) {
    const advanced = await call("POST", "/sandbox/clock", { advance_to: advanceTo }, renewingAs);
    remaining = advanced.jobs_remaining as number;
  }
  const renewalMs = performance.now() - renewalStart;
  const charged = (await call("GET", "/invoices?limit=1", undefined, renewingAs)).total_count as number;
  renewalRow = {
    renewals: RENEWALS,
    charged,
    advances,
    msPerRenewal: renewalMs / RENEWALS,
    callsPerRenewal: onPath.calls / RENEWALS,
    sequentialPerRenewal: onPath.sequential / RENEWALS,
    providerPerRenewal: onPath.provider / RENEWALS,
  };

  console.log(
    `\nLocal stack, ${REQUESTS} requests per row after ${WARMUP} warm-up, ${CONCURRENCY} in flight, Node ${process.version}\n`,
  );
  console.log(
    "What the API adds to the DynamoDB calls it needs: each group's rows measured side by side, in 8\n" +
      "turns taken in rotation, so that the machine's drift weighs on each the same; each set against the\n" +
      "raw call of its group (p50, and requests per second at the same concurrency).\n",
  );
  console.log(
    formatTable(
      ["operation", "p50 ms", "p99 ms", "req/s", "p50 vs raw", "req/s vs raw"],
      sideBySideRows.map((row) => [
        `${row.group}: ${row.name}`,
        row.figures.p50.toFixed(2),
        row.figures.p99.toFixed(2),
        row.figures.rps.toFixed(0),
        row.vsRaw ? `${row.vsRaw.p50.toFixed(2)}x` : "",
        row.vsRaw ? `${row.vsRaw.rps.toFixed(2)}x` : "",
      ]),
    ),
  );
  console.log(
    "\nEach endpoint alone. DynamoDB round trips per request (counted over each row's metered warm-up; the\n" +
      "timed requests run without the counter): calls the request's own path sent, how many of them it\n" +
      "waited for in turn (sequential; calls sent together count once), the sandbox provider's own calls (a\n" +
      "real provider is an HTTP call instead), and the background's (stream fan-out, queue workers).\n",
  );
  console.log(
    formatTable(
      ["operation", "p50 ms", "p99 ms", "req/s", "calls", "sequential", "provider", "background"],
      rows.map((row) => [
        row.name,
        row.figures.p50.toFixed(2),
        row.figures.p99.toFixed(2),
        row.figures.rps.toFixed(0),
        row.trips?.calls.toFixed(2) ?? "",
        row.trips?.sequential.toFixed(2) ?? "",
        row.trips?.provider.toFixed(2) ?? "",
        row.trips?.background.toFixed(2) ?? "",
      ]),
    ),
  );

  if (renewalRow) {
    const renewal = renewalRow;
    console.log(
      `\nSubscription renewals end to end: ${renewal.renewals} subscriptions past their trial through POST /sandbox/clock ` +
        `(${renewal.advances} calls, each within its time budget; ${renewal.charged} invoices charged)\n`,
    );
    console.log(
      formatTable(
        ["measure", "ms per renewal", "calls", "sequential", "provider"],
        [
          [
            "renewal job (invoice, merchant-initiated capture, next iteration)",
            renewal.msPerRenewal.toFixed(1),
            renewal.callsPerRenewal.toFixed(2),
            renewal.sequentialPerRenewal.toFixed(2),
            renewal.providerPerRenewal.toFixed(2),
          ],
        ],
      ),
    );
  }

  // Last: it gives the sandbox project a webhook URL, which the rows above must not pay for.
  const webhooks = await benchWebhooks({
    apiUrl: stack.url,
    credentials: stack.credentials.sandbox,
    events: REQUESTS,
    concurrency: CONCURRENCY,
    burst: Number(process.env.BENCH_WEBHOOK_BURST ?? 1000),
  });
  console.log(
    "\nWebhooks on the local stack: event committed → signed POST received on loopback " +
      "(stream poller, fan-out, fauxqs, delivery worker)\n",
  );
  console.log(
    formatTable(
      ["measure", "p50 ms", "p99 ms", "deliveries/s"],
      [
        [
          `event → delivery (${webhooks.events} events, ${webhooks.concurrency} in flight)`,
          webhooks.p50.toFixed(1),
          webhooks.p99.toFixed(1),
          "",
        ],
        [`burst of ${webhooks.burst} events`, "", "", webhooks.deliveriesPerSecond.toFixed(0)],
      ],
    ),
  );
} finally {
  await stack.stop();
  await rm(dataDir, { recursive: true, force: true });
}
