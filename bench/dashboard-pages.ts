/**
 * What each dashboard screen costs a browser, against a running stack (`npm start`): a new project
 * with a dashboard owner (`npm run project -- create --owner-email`), a few payments, then each
 * screen opened `RUNS` times (default 3) in headless Chromium with an empty cache, signed in. Per
 * screen: the bytes transferred (the page, its scripts and style sheets, every API call: the sum of
 * the Performance entries' `transferSize`) and the time to interactive (the `ready` mark the app
 * sets once the screen shows its data), medians. Prints a Markdown table.
 *
 *   npm start &                            # the local stack on :3000
 *   npx tsx bench/dashboard-pages.ts       # API_URL=http://localhost:3000 RUNS=3 CHROMIUM_PATH=…
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { chromiumPath, NO_CHROMIUM } from "../test/browser/chromium.ts";

const API_URL = process.env.API_URL ?? "http://localhost:3000";
const RUNS = Number(process.env.RUNS ?? 3);
const PASSWORD = "bench password of the dashboard";

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as a merchant script reads JSON
type Body = Record<string, any>;

function newProject(email: string) {
  const printed = execFileSync(
    "npm",
    ["run", "-s", "project", "--", "create", "--name", "Dashboard bench", "--owner-email", email],
    { encoding: "utf8", env: { ...process.env, DATA_DIR: process.env.DATA_DIR ?? resolve(".data") } },
  );
  const credentials = JSON.parse(printed.slice(printed.indexOf("{"))) as {
    sandbox: { project_id: string; private_key: string };
    owner: { sign_in_link: string };
  };
  const token = new URL(credentials.owner.sign_in_link).hash.split("token=")[1] ?? "";
  return { sandbox: credentials.sandbox, token };
}

async function send(method: string, path: string, body?: Body, authorization?: string) {
  const answer = await fetch(`${API_URL}${path}`, {
    method,
    headers: {
      origin: API_URL,
      ...(authorization ? { authorization } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await answer.json()) as Body;
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(json)}`);
  return json;
}

/** A few payments (one with a customer), so that lists and the payment's screen have something to show. */
async function seed(sandbox: { project_id: string; private_key: string }): Promise<string> {
  const key = `Basic ${Buffer.from(`${sandbox.project_id}:${sandbox.private_key}`).toString("base64")}`;
  const publicKey = `Basic ${Buffer.from(`${sandbox.project_id}:`).toString("base64")}`;
  let transactionId = "";
  for (let index = 0; index < 5; index++) {
    const { customer } = await send("POST", "/customers", { email: `shopper${index}@example.com` }, key);
    const { card } = await send(
      "POST",
      "/cards",
      { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc2: "123" },
      publicKey,
    );
    const { invoice } = await send(
      "POST",
      "/invoices",
      { name: `Order ${index}`, amount: `${10 + index}.50`, currency: "EUR", customer_id: customer.id },
      key,
    );
    const paid = await send("POST", `/invoices/${invoice.id}/capture`, { source: card.id }, key);
    transactionId = paid.transaction.id;
  }
  return transactionId;
}

interface Measure {
  bytes: number;
  requests: number;
  readyMs: number;
}

async function measure(context: BrowserContext, hash: string): Promise<Measure> {
  const page = await context.newPage();
  await page.goto(`${API_URL}/dashboard${hash}`);
  await page.waitForFunction(() => performance.getEntriesByName("ready").length > 0, undefined, {
    timeout: 30_000,
  });
  // What the screen loads after it is usable (the overview's chart script) counts in its bytes.
  await page.waitForLoadState("networkidle");
  const figures = (await page.evaluate(`(() => {
    const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
    return {
      bytes: entries.reduce((sum, entry) => sum + entry.transferSize, 0),
      requests: entries.length,
      readyMs: performance.getEntriesByName("ready")[0].startTime,
    };
  })()`)) as Measure;
  await page.close();
  return figures;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main() {
  if (!chromiumPath) throw new Error(NO_CHROMIUM);
  const email = `bench-${Date.now()}@example.com`;
  const { sandbox, token } = newProject(email);
  const transactionId = await seed(sandbox);
  await send("POST", "/dashboard/accept", { token, password: PASSWORD });

  const screens: [string, string, boolean][] = [
    ["Sign-in", "#/", false],
    ["Overview", "#/", true],
    ["Payments", "#/payments", true],
    ["A payment", `#/payments/${transactionId}`, true],
    ["Customers", "#/customers", true],
    ["Subscriptions", "#/subscriptions", true],
    ["Events", "#/events", true],
    ["Developers", "#/developers", true],
    ["Team", "#/team", true],
    ["Audit log", "#/audit", true],
    ["Account", "#/account", true],
  ];
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--headless"],
  });
  const rows: string[] = [];
  try {
    for (const [name, hash, signedIn] of screens) {
      const runs: Measure[] = [];
      for (let run = 0; run < RUNS; run++) {
        // A new context each time: an empty cache and cookie jar, as a first visit.
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        if (signedIn) {
          const answer = await context.request.post(`${API_URL}/dashboard/sign-in`, {
            data: { email, password: PASSWORD },
            headers: { origin: API_URL },
          });
          if (!answer.ok()) throw new Error(`sign-in: ${answer.status()} ${await answer.text()}`);
        }
        runs.push(
          await measure(context, hash).catch((error: Error) => {
            throw new Error(`${name}: ${error.message}`);
          }),
        );
        await context.close();
      }
      const kib = median(runs.map((r) => r.bytes)) / 1024;
      rows.push(
        `| ${name} | ${kib.toFixed(1)} | ${median(runs.map((r) => r.requests))} | ${Math.round(median(runs.map((r) => r.readyMs)))} |`,
      );
    }
  } finally {
    await browser.close();
  }
  console.log(`Dashboard screens on ${API_URL}, empty cache, median of ${RUNS} (Chromium, 1280x800):\n`);
  console.log("| Screen | Transferred (KiB) | Requests | Time to interactive (ms) |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const row of rows) console.log(row);
}

await main();
