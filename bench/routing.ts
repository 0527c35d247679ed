/**
 * `npm run bench`, the routing part, on the local stack (`npm start`'s machinery, in this process):
 *
 * 1. A 70/30 split over 1,000 authorizations: where each landed, against the weights.
 * 2. What routing adds to an authorize: the decision as authorize makes it (`routePayment`: rules,
 *    configurations and breakers from the container's cache), timed alone, beside the authorize's
 *    own p50 measured in the same run.
 * 3. An outage rehearsed on one configuration of a chain: how many payments tried it before its
 *    breaker opened, and that every payment was approved by the next one.
 *
 * Prints figures; asserts nothing.  npx tsx bench/routing.ts   # BENCH_SPLIT_PAYMENTS (default 1000)
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack } from "../lib/local/start.ts";
import { type Json, merchantClient } from "./client.ts";
import { formatTable, percentile } from "./stats.ts";

const PAYMENTS = Number(process.env.BENCH_SPLIT_PAYMENTS ?? 1000);
const CONCURRENCY = 8;
const dataDir = await mkdtemp(join(tmpdir(), "payment-api-bench-routing-"));
const stack = await startLocalStack({ port: 0, dataDir, log: () => {} });
const { createProject } = await import("../shared/projects/project.ts");
const { routePayment } = await import("../shared/routing/route.ts");

const project = await createProject("Bench routing");
const send = merchantClient(stack.url, project.sandbox.project_id, project.sandbox.private_key);

async function inParallel<T>(count: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await work(index);
      }
    }),
  );
  return results;
}

try {
  const made = async (name: string, settings: Record<string, string> = {}) =>
    (await send("POST", "/gateways/sandbox/gateway-configurations", { name, settings })).gateway_configuration
      .id as string;
  const [seventy, thirty] = [await made("Acquirer 70"), await made("Acquirer 30")];
  // Ten rules that do not match the bench's payments, as a merchant's list would hold, then the split.
  const misses = Array.from({ length: 10 }, (_, i) => ({
    id: `miss-${i}`,
    conditions: { currencies: ["JPY"], card_types: ["debit"], metadata: { channel: `c${i}` } },
    action: { type: "route", gateway_configuration_ids: [seventy] },
  }));
  await send("PUT", "/routing-rules", {
    version: 0,
    rules: [
      ...misses,
      {
        id: "split",
        action: {
          type: "split",
          splits: [
            { gateway_configuration_id: seventy, weight: 70 },
            { gateway_configuration_id: thirty, weight: 30 },
          ],
        },
      },
    ],
  });
  const card = (await send("POST", "/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .card.id as string;
  const invoices = await inParallel(
    PAYMENTS,
    async () =>
      (await send("POST", "/invoices", { name: "Bench", amount: "10.00", currency: "EUR" })).invoice
        .id as string,
  );
  const timings: number[] = [];
  const landed = await inParallel(PAYMENTS, async (index) => {
    const started = performance.now();
    const answer = await send("POST", `/invoices/${invoices[index]}/authorize`, { source: card });
    timings.push(performance.now() - started);
    return answer.transaction.gateway_configuration_id as string;
  });
  const toSeventy = landed.filter((id) => id === seventy).length;
  console.log(`\nRouting: a 70/30 split over ${PAYMENTS} authorizations (${CONCURRENCY} in flight)\n`);
  console.log(
    formatTable(
      ["configuration", "weight", "payments", "share", "off by"],
      [
        [
          seventy,
          "70",
          String(toSeventy),
          `${((100 * toSeventy) / PAYMENTS).toFixed(1)} %`,
          `${((100 * toSeventy) / PAYMENTS - 70).toFixed(1)} pts`,
        ],
        [
          thirty,
          "30",
          String(PAYMENTS - toSeventy),
          `${((100 * (PAYMENTS - toSeventy)) / PAYMENTS).toFixed(1)} %`,
          `${((100 * (PAYMENTS - toSeventy)) / PAYMENTS - 30).toFixed(1)} pts`,
        ],
      ],
    ),
  );

  // The decision alone, as authorize makes it, from the container's caches (warmed by the run above).
  const invoice = { amount: "10.00", currency: "EUR", customer_id: null, metadata: {}, shipping: null };
  const decisions: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const started = performance.now();
    await routePayment({
      scope: project.sandbox.project_id,
      invoice,
      transactionId: `tr_bench${i}`,
      card: { scheme: "visa", iin: "424242" },
      initiator: "merchant",
      pinned: null,
    });
    decisions.push(performance.now() - started);
  }
  decisions.sort((a, b) => a - b);
  timings.sort((a, b) => a - b);
  console.log(
    "\nWhat routing adds to an authorize (11 rules, 3 card configurations, breakers from the cache)\n",
  );
  console.log(
    formatTable(
      ["measure", "p50 ms", "p99 ms"],
      [
        [
          "routing decision (routePayment, 5,000 calls)",
          percentile(decisions, 50).toFixed(3),
          percentile(decisions, 99).toFixed(3),
        ],
        [
          "POST /invoices/{id}/authorize, same run",
          percentile(timings, 50).toFixed(2),
          percentile(timings, 99).toFixed(2),
        ],
      ],
    ),
  );

  // An outage on the first configuration of a chain: the breaker opens and payments route around it.
  const down = await made("Down", { outage: "true" });
  const rules = (await send("GET", "/routing-rules")).routing_rules;
  await send("PUT", "/routing-rules", {
    version: rules.version,
    rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [down, seventy] } }],
  });
  const outage = 50;
  const more = await inParallel(
    outage,
    async () =>
      (await send("POST", "/invoices", { name: "Bench", amount: "10.00", currency: "EUR" })).invoice
        .id as string,
  );
  let triedDown = 0;
  let approved = 0;
  for (const id of more) {
    const answer = await send("POST", `/invoices/${id}/authorize`, { source: card });
    if (answer.transaction.status === "authorized") approved += 1;
    if (answer.transaction.attempts.some((attempt: Json) => attempt.gateway_configuration_id === down))
      triedDown += 1;
  }
  console.log(
    `\nAn outage on the first configuration of a chain: ${outage} payments, ${approved} approved, ` +
      `${triedDown} tried the failing configuration before its breaker opened, ${outage - triedDown} routed around it.`,
  );
} finally {
  await stack.stop();
}
