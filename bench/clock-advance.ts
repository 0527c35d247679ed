/**
 * A long sandbox clock advance against a running stack (`npm start`, or a deployed stage): a new
 * project with `SUBSCRIPTIONS` daily subscriptions (default 20), the clock advanced `DAYS` days
 * (default 400) with the same request again until nothing is due, then every period checked: each
 * charged exactly once. Prints each call's time, jobs run and jobs remaining; asserts nothing but the
 * end result (it exits 1 when a period was charged twice or never, or a call answered 5xx).
 *
 *   npm start &                       # the local stack on :3000
 *   npx tsx bench/clock-advance.ts    # API_URL=http://localhost:3000 DAYS=400 SUBSCRIPTIONS=20
 */
import { resolve } from "node:path";

const API_URL = process.env.API_URL ?? "http://localhost:3000";
const DAYS = Number(process.env.DAYS ?? 400);
const SUBSCRIPTIONS = Number(process.env.SUBSCRIPTIONS ?? 20);
const DAY = 24 * 3600 * 1000;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as a merchant script reads JSON
type Body = Record<string, any>;

function client(projectId: string, key: string) {
  const authorization = `Basic ${Buffer.from(`${projectId}:${key}`).toString("base64")}`;
  return async (method: string, path: string, body?: Body): Promise<{ status: number; body: Body }> => {
    const answer = await fetch(`${API_URL}${path}`, {
      method,
      headers: { authorization, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: answer.status, body: (await answer.json()) as Body };
  };
}

/** A project of its own, made by `npm run project -- create` as a merchant would. */
async function newSandbox() {
  const { execFileSync } = await import("node:child_process");
  const printed = execFileSync("npm", ["run", "-s", "project", "--", "create", "--name", "Clock bench"], {
    encoding: "utf8",
    env: { ...process.env, DATA_DIR: process.env.DATA_DIR ?? resolve(".data") },
  });
  const credentials = JSON.parse(printed.slice(printed.indexOf("{"))) as {
    sandbox: { project_id: string; private_key: string };
  };
  return client(credentials.sandbox.project_id, credentials.sandbox.private_key);
}

async function main() {
  const send = await newSandbox();
  await send("POST", "/plans", {
    id: "daily",
    name: "Daily",
    amount: "1.00",
    currency: "EUR",
    interval: "1d",
  });
  const subscriptions: string[] = [];
  for (let index = 0; index < SUBSCRIPTIONS; index++) {
    const customer = (await send("POST", "/customers", { first_name: `Daily ${index}` })).body.customer;
    const card = (await send("POST", "/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
      .body.card;
    const made = await send("POST", "/subscriptions", {
      customer_id: customer.id,
      plan_id: "daily",
      source: card.id,
    });
    if (made.status !== 200) throw new Error(JSON.stringify(made.body));
    subscriptions.push(made.body.subscription.id);
  }
  const now = Date.parse((await send("GET", "/sandbox/clock")).body.clock.now);
  const target = new Date(now + DAYS * DAY).toISOString();
  console.log(`${SUBSCRIPTIONS} daily subscriptions; advancing ${DAYS} days to ${target}`);

  const times: number[] = [];
  let jobs = 0;
  let failures = 0;
  let serverErrors = 0;
  for (let call = 1; ; call++) {
    const started = performance.now();
    const answer = await send("POST", "/sandbox/clock", { advance_to: target });
    const ms = performance.now() - started;
    times.push(ms);
    if (answer.status >= 500) serverErrors++;
    if (answer.status !== 200) {
      console.log(`call ${call}: ${answer.status} ${JSON.stringify(answer.body)}`);
      if (answer.status >= 500) continue;
      break;
    }
    const ran = answer.body.jobs as Array<{ outcome: string }>;
    jobs += ran.length;
    failures += ran.filter((job) => job.outcome.startsWith("failed")).length;
    console.log(
      `call ${call}: ${(ms / 1000).toFixed(1)} s, ${ran.length} jobs, clock ${answer.body.clock.now}, remaining ${answer.body.jobs_remaining}`,
    );
    if (answer.body.jobs_remaining === 0) break;
  }

  // Every period charged exactly once: the paid invoices of each subscription are iterations 1..n.
  const paid = new Map<string, number[]>();
  let after = "";
  for (;;) {
    const page = (await send("GET", `/invoices?limit=100&order=asc${after ? `&start_after=${after}` : ""}`))
      .body;
    for (const invoice of page.invoices) {
      if (!invoice.subscription_id || !invoice.transaction_id) continue;
      const transaction = (await send("GET", `/transactions/${invoice.transaction_id}`)).body.transaction;
      if (transaction.status !== "completed") continue;
      paid.set(invoice.subscription_id, [
        ...(paid.get(invoice.subscription_id) ?? []),
        Number(invoice.metadata.subscription_iteration),
      ]);
    }
    if (!page.has_more) break;
    after = page.invoices.at(-1).id;
  }
  let wrong = 0;
  for (const id of subscriptions) {
    const iterations = (paid.get(id) ?? []).sort((a, b) => a - b);
    const exact = iterations.every((iteration, index) => iteration === index + 1);
    if (!exact || iterations.length < DAYS) {
      wrong++;
      console.log(`${id}: paid iterations ${iterations.join(",")}`);
    }
  }
  const sorted = [...times].sort((a, b) => a - b);
  const seconds = (ms: number | undefined) => ((ms ?? Number.NaN) / 1000).toFixed(1);
  console.log(
    `${times.length} calls, ${jobs} jobs (${failures} failed), 5xx: ${serverErrors}; call time median ${seconds(sorted[Math.floor(sorted.length / 2)])} s, max ${seconds(sorted.at(-1))} s; subscriptions charged other than once per period: ${wrong}`,
  );
  if (wrong > 0 || serverErrors > 0) process.exitCode = 1;
}

await main();
