import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../lib/local/paths.ts";
import { appleCertificateFor } from "../support/applepay.ts";
import { startSftpServer, type TestSftpServer } from "../support/sftp-server.ts";
import { clientLibrary, read, STYLES, type Style } from "./client-library.ts";
import { api, type Client, type RunningStack, startStack } from "./harness.ts";

/**
 * Issue 21's first walk, against `npm start` over HTTP: every route the official clients know that
 * this issue serves, called as each client calls it (`../shared/reference/client-compatibility.md`):
 * Node omits unset keys, Python, PHP and Ruby send them as null in JSON bodies; Python writes unset
 * query options as `None`, PHP as empty values; every answer carries `success: true` and the key the
 * client reads.
 */
let stack: RunningStack;

beforeAll(async () => {
  stack = await startStack({ dynamodb: "own" });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** A client library's requests to this file's stack. */
const library = (style: Style, credentials: { project_id: string; private_key: string }) =>
  clientLibrary(stack.url, style, credentials);

/** Waits (up to 30 s) for `probe` to find what the local stack's background work makes. */
async function eventually<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + 30_000;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error("Not done within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A project of its own on the running stack, as a merchant makes it: `npm run project -- create`. */
async function createProjectOnStack(name: string) {
  const { DYNAMODB_ENDPOINT: _shared, TABLE_NAME: _table, ...env } = process.env;
  const created = await promisify(execFile)(
    process.execPath,
    [join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs"), "bin/project.ts", "create", "--name", name],
    { cwd: repoRoot, env: { ...env, DATA_DIR: stack.dataDir } },
  );
  return JSON.parse(created.stdout.slice(created.stdout.indexOf("{"))).sandbox as {
    project_id: string;
    private_key: string;
  };
}

const PRODUCT_KEYS = ["name", "amount", "currency", "metadata", "return_url", "cancel_url"] as const;
const LAYOUT_KEYS = ["name", "type", "is_default", "configuration"] as const;
const AUTHORIZE_KEYS = [
  "synchronous",
  "retry_drop_liability_shift",
  "capture_amount",
  "enable_three_d_s_2",
  "allow_fallback_to_sale",
  "override_mac_blocking",
  "external_three_d_s",
  "save_source",
  "metadata",
  "incremental",
] as const;

describe("the routes of issue 21 on the local stack, as each official client calls them", () => {
  it("serves products, cards, gateways, transactions and the invoice extras to all four clients", async () => {
    const merchant = api(stack.url, stack.credentials.sandbox);
    const customer = (await merchant.post("/customers", { first_name: "Ada" })).body.customer;
    for (const style of STYLES) {
      const client = library(style, stack.credentials.sandbox);
      // Products.
      const product = read(
        await client.post("/products", PRODUCT_KEYS, {
          name: `Gold ${style}`,
          amount: "19.90",
          currency: "EUR",
        }),
        "product",
      );
      expect(product.url).toContain("/pay/");
      expect(read(await client.list("/products"), "products").length).toBeGreaterThan(0);
      read(await client.get(`/products/${product.id}`), "product");
      expect(
        read(
          await client.put(`/products/${product.id}`, PRODUCT_KEYS, { ...product, name: `Gold+ ${style}` }),
          "product",
        ).name,
      ).toBe(`Gold+ ${style}`);
      const fromProduct = read(await client.postEmpty(`/products/${product.id}/invoices`), "invoice");
      expect(fromProduct).toMatchObject({ amount: "19.90", currency: "EUR" });
      read(await client.del(`/products/${product.id}`));

      // Cards, gateway configurations of one gateway, transactions as a POST.
      read(await client.list("/cards"), "cards");
      read(await client.list("/gateways/sandbox/gateway-configurations"), "gateway_configurations");
      read(
        await client.post("/transactions", ["filter", "limit", "end_before", "start_after"], {}),
        "transactions",
      );

      // The invoice's customer.
      const invoice = (await merchant.post("/invoices", { name: "Order", amount: "10.00", currency: "EUR" }))
        .body.invoice;
      read(
        await client.post(`/invoices/${invoice.id}/customers`, ["customer_id"], { customer_id: customer.id }),
        "customer",
      );
      expect(read(await client.get(`/invoices/${invoice.id}/customers`), "customer").id).toBe(customer.id);

      // 3DS without paying: an answer with customer_action carries transaction too.
      const card = (
        await merchant.post("/cards", { number: "4000000000000101", exp_month: 12, exp_year: 2099 })
      ).body.card;
      const started = read(
        await client.post(`/invoices/${invoice.id}/three-d-s`, ["source", "enable_three_d_s_2"], {
          source: card.id,
        }),
      );
      expect(started.customer_action).toMatchObject({ type: "url" });
      expect(started).toHaveProperty("transaction");

      // A payout to a card.
      const payoutInvoice = (
        await merchant.post("/invoices", { name: "Winnings", amount: "5.00", currency: "EUR" })
      ).body.invoice;
      const payoutCard = (
        await merchant.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
      ).body.card;
      const keys =
        style === "python" || style === "php"
          ? ["gateway_configuration_id", "source", "force_gateway_configuration_id"]
          : ["gateway_configuration_id", "source", "force_gateway_configuration_id", "metadata"];
      expect(
        read(
          await client.post(`/invoices/${payoutInvoice.id}/payout`, keys, { source: payoutCard.id }),
          "transaction",
        ).status,
      ).toBe("completed");
    }
    // Node and Ruby send authenticate to the literal path: it names no invoice.
    for (const style of ["node", "ruby"] as const) {
      const answer = await library(style, stack.credentials.sandbox).post(
        "/invoices/:invoice_id/authenticate",
        AUTHORIZE_KEYS,
        {
          source: "card_x",
        },
      );
      expect(answer.status).toBe(404);
      expect(answer.body.error_type).toBe("resource.invoice.not-found");
    }
  });

  it("serves the project routes: Apple Pay certificates, the Python and PHP clients' activities and supervised projects, deletion", async () => {
    const certificatesPath = "/projects/applepay/alternative-merchant-certificates";
    for (const style of STYLES) {
      const client = library(style, stack.credentials.sandbox);
      const made = read(await client.postEmpty(certificatesPath), "alternative_merchant_certificate");
      const listed = read(await client.get(certificatesPath), "applepay_certificates");
      expect(typeof listed.count).toBe("string");
      expect(listed.alternative_merchant_certificates.map((found: { id: string }) => found.id)).toContain(
        made.id,
      );
      read(await client.del(`${certificatesPath}/${made.id}`));
      // Every client sends the placeholder of DELETE /projects/{project_id} itself.
      const placeholder = await client.del(
        style === "php" ? "/projects/{project_id}" : "/projects/%7Bproject_id%7D",
      );
      expect(placeholder.status).toBe(404);
      expect(placeholder.body.error_type).toBe("resource.project.not-found");
    }
    // Rotation through our own routes: Apple's certificate for a key pair we hold.
    const merchant = api(stack.url, stack.credentials.sandbox);
    const pending = (await merchant.post(certificatesPath, {})).body.alternative_merchant_certificate;
    const activated = await merchant.put(`${certificatesPath}/${pending.id}`, {
      certificate: await appleCertificateFor(pending.csr),
    });
    expect(activated.body.alternative_merchant_certificate.status).toBe("active");

    for (const style of ["python", "php"] as const) {
      const client = library(style, stack.credentials.sandbox);
      const activities = read(await client.list("/activities"), "activities");
      expect(activities.length).toBeGreaterThan(0);
      read(await client.get(`/activities/${activities[0].id}`), "activity");
      const child = read(
        await client.post(
          "/supervised-projects",
          ["id", "name", "default_currency", "dunning_configuration", "applepay_settings", "public_metadata"],
          { name: `Sub-merchant ${style}`, default_currency: "EUR" },
        ),
        "project",
      );
      expect(child.private_key).toEqual(expect.any(String));
      expect(
        read(await client.list("/supervised-projects"), "projects").map((found: { id: string }) => found.id),
      ).toContain(child.id);
      const childClient: Client = api(stack.url, { project_id: child.id, private_key: child.private_key });
      expect((await childClient.get("/customers")).status).toBe(200);
      read(await client.del(`/projects/${child.id}`));
      expect((await childClient.get("/customers")).status).toBe(401);
    }
  });

  it("serves the sandbox's payouts and their items to every client, after a day on the clock", async () => {
    const merchant = api(stack.url, stack.credentials.sandbox);
    const card = (
      await merchant.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
    ).body.card;
    const invoice = (await merchant.post("/invoices", { name: "Order", amount: "40.00", currency: "EUR" }))
      .body.invoice;
    const captured = await merchant.post(`/invoices/${invoice.id}/capture`, { source: card.id });
    expect(captured.body.transaction.status).toBe("completed");
    const now = Date.parse((await merchant.get("/sandbox/clock")).body.clock.now);
    const nextDay = new Date(now + 24 * 3600 * 1000).toISOString().slice(0, 10);
    const advanced = await merchant.post("/sandbox/clock", { advance_to: `${nextDay}T00:05:00.000Z` });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    for (const style of STYLES) {
      const client = library(style, stack.credentials.sandbox);
      const payouts = read(await client.list("/payouts"), "payouts");
      const payout = payouts.find((found: { sales_volume: string }) => found.sales_volume === "40.00");
      expect(payout, JSON.stringify(payouts)).toBeDefined();
      expect(read(await client.get(`/payouts/${payout.id}`), "payout").id).toBe(payout.id);
      const items = read(await client.list(`/payouts/${payout.id}/items`), "items");
      expect(items).toEqual([
        expect.objectContaining({
          transaction_id: captured.body.transaction.id,
          amount: "40.00",
          type: "sale",
        }),
      ]);
    }
    const payout = read(await library("python", stack.credentials.sandbox).list("/payouts"), "payouts")[0];
    read(await library("php", stack.credentials.sandbox).del(`/payouts/${payout.id}`));
    expect((await merchant.get(`/payouts/${payout.id}`)).status).toBe(404);
  });

  it("serves export layouts, exports and SFTP settings to every client", async () => {
    const sandboxId = stack.credentials.sandbox.project_id;
    for (const style of STYLES) {
      const client = library(style, stack.credentials.sandbox);
      const options = read(
        await client.get("/exports/layouts/options/transactions"),
        "export_layout_configuration_options",
      );
      expect(options.columns).toContain("captured_amount");
      expect(read(await client.get("/exports/layouts/default/transactions"), "export_layout").type).toBe(
        "transactions",
      );
      const layout = read(
        await client.post("/exports/layouts", LAYOUT_KEYS, {
          name: `Finance ${style}`,
          type: "payouts",
          is_default: false,
          configuration: { columns: [{ name: "id", rename: "Payout" }], time: null, amount: null },
        }),
        "export_layout",
      );
      read(await client.get(`/exports/layouts/${layout.id}`), "export_layout");
      const renamed = read(
        await client.put(`/exports/layouts/${layout.id}`, ["name", "is_default", "configuration"], {
          name: `Bank ${style}`,
        }),
        "export_layout",
      );
      expect(renamed.name).toBe(`Bank ${style}`);
      expect(
        read(await client.list("/exports/layouts"), "export_layouts").map(
          (found: { id: string }) => found.id,
        ),
      ).toContain(layout.id);
      read(await client.del(`/exports/layouts/${layout.id}`));
      // The SFTP settings: PUT answers success alone, GET never the secret.
      read(
        await client.put(
          `/projects/${sandboxId}/sftp-settings`,
          ["endpoint", "username", "password", "private_key"],
          {
            endpoint: "127.0.0.1:2222",
            username: style,
            password: "not-shown",
          },
        ),
      );
      const settings = read(await client.get(`/projects/${sandboxId}/sftp-settings`), "sftp_settings");
      expect(settings).toMatchObject({ enabled: true, endpoint: "127.0.0.1:2222", username: style });
      expect(JSON.stringify(settings)).not.toContain("not-shown");
      read(await client.del(`/projects/${sandboxId}/sftp-settings`));
    }
    // An export requested runs in the background, through the local stack's queue.
    const merchant = api(stack.url, stack.credentials.sandbox);
    const card = (
      await merchant.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
    ).body.card;
    const invoice = (await merchant.post("/invoices", { name: "Exported", amount: "3.00", currency: "EUR" }))
      .body.invoice;
    expect((await merchant.post(`/invoices/${invoice.id}/capture`, { source: card.id })).status).toBe(200);
    const now = new Date((await merchant.get("/sandbox/clock")).body.clock.now);
    const requested = await merchant.post("/exports", {
      type: "transactions",
      from: new Date(now.getTime() - 3 * 86_400_000).toISOString(),
      to: new Date(now.getTime() + 60_000).toISOString(),
    });
    expect(requested.status, JSON.stringify(requested.body)).toBe(200);
    const id = requested.body.export.id;
    const completed = await eventually(async () => {
      const found = (await merchant.get(`/exports/${id}`)).body.export;
      return found.status === "completed" ? found : undefined;
    });
    expect(completed.rows).toBeGreaterThan(0);
    expect(
      read(await library("python", stack.credentials.sandbox).list("/exports"), "exports").map(
        (found: { id: string }) => found.id,
      ),
    ).toContain(id);
  });

  it("closes a sandbox day on the clock: payments and a refund, its payout matching them to the cent, the day's exports delivered by SFTP in the chosen layouts", async () => {
    let sftp: TestSftpServer | undefined;
    try {
      sftp = await startSftpServer({ username: "finance", password: "day-pass" });
      const project = await createProjectOnStack("Sandbox day");
      const client = api(stack.url, project);
      expect(
        (
          await client.put(`/projects/${project.project_id}/sftp-settings`, {
            endpoint: `127.0.0.1:${sftp.port}`,
            username: "finance",
            password: "day-pass",
          })
        ).status,
      ).toBe(200);
      for (const [type, columns] of [
        [
          "transactions",
          [
            { name: "id", rename: "Reference" },
            { name: "captured_amount", rename: "Captured" },
            { name: "refunded_amount", rename: null },
          ],
        ],
        [
          "payouts",
          [
            { name: "id", rename: "Payout" },
            { name: "amount", rename: null },
            { name: "fees", rename: null },
          ],
        ],
        [
          "payout_items",
          [
            { name: "transaction_id", rename: "Transaction" },
            { name: "type", rename: null },
            { name: "amount", rename: null },
            { name: "fees", rename: null },
          ],
        ],
      ] as const) {
        const made = await client.post("/exports/layouts", {
          name: type,
          type,
          is_default: true,
          configuration: { columns, time: { format: "date_time" }, amount: { precision: 2, separator: "," } },
        });
        expect(made.status, JSON.stringify(made.body)).toBe(200);
      }
      const now = Date.parse((await client.get("/sandbox/clock")).body.clock.now);
      const day = new Date(now + 86_400_000).toISOString().slice(0, 10);
      expect((await client.post("/sandbox/clock", { advance_to: `${day}T10:00:00.000Z` })).status).toBe(200);
      const paid = [];
      for (const amount of ["20.00", "7.35", "12.10"]) {
        const card = (
          await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
        ).body.card;
        const invoice = (await client.post("/invoices", { name: "Order", amount, currency: "EUR" })).body
          .invoice;
        const captured = await client.post(`/invoices/${invoice.id}/capture`, { source: card.id });
        expect(captured.body.transaction.status).toBe("completed");
        paid.push(captured.body.transaction);
      }
      expect((await client.post(`/transactions/${paid[2].id}/refunds`, { amount: "2.10" })).status).toBe(200);
      const midnight = new Date(Date.parse(`${day}T00:01:00.000Z`) + 86_400_000).toISOString();
      expect((await client.post("/sandbox/clock", { advance_to: midnight })).status).toBe(200);

      const [payout] = (await client.get("/payouts")).body.payouts;
      expect(payout).toMatchObject({
        sales_transactions: 3,
        sales_volume: "39.45",
        refunds_transactions: 1,
        refunds_volume: "2.10",
      });
      const items = (await client.get(`/payouts/${payout.id}/items?limit=100`)).body.items;
      // The items match the day's movements to the cent, and the payout is what they add up to.
      expect(
        items
          .map((item: { transaction_id: string; type: string; amount: string }) => [
            item.transaction_id,
            item.type,
            item.amount,
          ])
          .sort(),
      ).toEqual(
        [
          [paid[0].id, "sale", "20.00"],
          [paid[1].id, "sale", "7.35"],
          [paid[2].id, "sale", "12.10"],
          [paid[2].id, "refund", "-2.10"],
        ].sort(),
      );
      const cents = (amount: string) => Math.round(Number(amount) * 100);
      const itemsNet = items.reduce(
        (sum: number, item: { amount: string; fees: string }) => sum + cents(item.amount) - cents(item.fees),
        0,
      );
      expect(cents(payout.amount)).toBe(itemsNet);
      expect(payout.reconciliation).toMatchObject({ status: "matched", unmatched_items: 0 });

      // The day's three exports reach the merchant's SFTP server, in the layouts chosen.
      const server = sftp;
      const names = [`payout_items_${day}.csv`, `payouts_${day}.csv`, `transactions_${day}.csv`];
      await eventually(async () => (names.every((name) => server.files.has(name)) ? true : undefined));
      const comma = (amount: string) => amount.replace(".", ",");
      // Written under a temporary name, renamed into place: nothing half-written is left.
      expect([...server.files.keys()].sort()).toEqual(names);
      expect(server.files.get(`transactions_${day}.csv`)?.toString("utf8").split("\r\n").slice(0, 1)).toEqual(
        ["Reference,Captured,refunded_amount"],
      );
      const transactionsCsv = server.files.get(`transactions_${day}.csv`)?.toString("utf8") ?? "";
      for (const transaction of paid) expect(transactionsCsv).toContain(transaction.id);
      expect(transactionsCsv).toContain(`${paid[2].id},"12,10","2,10"`);
      expect(server.files.get(`payouts_${day}.csv`)?.toString("utf8")).toBe(
        `Payout,amount,fees\r\n${payout.id},"${comma(payout.amount)}","${comma(payout.fees)}"\r\n`,
      );
      const itemsCsv = server.files.get(`payout_items_${day}.csv`)?.toString("utf8") ?? "";
      for (const item of items) {
        expect(itemsCsv).toContain(
          `${item.transaction_id},${item.type},"${comma(item.amount)}","${comma(item.fees)}"`,
        );
      }
    } finally {
      await sftp?.close();
    }
  });

  it("serves gift card balances to every client", async () => {
    const merchant = api(stack.url, stack.credentials.sandbox);
    const customer = (await merchant.post("/customers", { first_name: "Ada" })).body.customer;
    const card = (
      await merchant.post("/cards", { number: "4000000000007007", exp_month: 12, exp_year: 2099 })
    ).body.card;
    const token = (await merchant.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    for (const style of STYLES) {
      const balances = read(
        await library(style, stack.credentials.sandbox).get(`/balances/tokens/${token.id}`),
        "balances",
      );
      expect(balances.available_balance).toEqual({ amount: "50.00", currency: "EUR", expiry: "2099-06-30" });
    }
  });
});
