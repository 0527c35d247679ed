import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configurationOptions, EXPORT_COLUMNS, TIME_FORMAT_NAMES } from "../../shared/exports/catalogue.ts";
import { runExport } from "../../shared/exports/run.ts";
import { resetExportStorage } from "../../shared/exports/storage/index.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Export layouts (`/exports/layouts`), exports as background runs (`/exports`), as the official
 * clients call them (`../shared/reference/client-compatibility.md`, "Export layouts").
 */
const local = useInProcessApi("Exports test");

let exportsDir: string;
beforeAll(async () => {
  exportsDir = await mkdtemp(join(tmpdir(), "exports-test-"));
  process.env.EXPORTS_DIR = exportsDir;
  resetExportStorage();
});
afterAll(async () => {
  await rm(exportsDir, { recursive: true, force: true });
});

/** A fresh sandbox environment: layouts are per environment, and defaults too. */
async function environment() {
  const project = await createProject("Exports");
  return { project, client: api(local.url, project.sandbox), live: api(local.url, project.live) };
}

const finance = {
  name: "Finance",
  type: "transactions",
  is_default: false,
  configuration: {
    columns: [
      { name: "id", rename: "Transaction" },
      { name: "amount", rename: "Amount" },
      { name: "currency", rename: null },
    ],
    time: { format: "date_time" },
    amount: { precision: 2, separator: "," },
  },
};

describe("export layouts", () => {
  it("are created, read, listed, changed and deleted with the reference's keys", async () => {
    const { client, project } = await environment();
    const created = await client.post("/exports/layouts", finance);
    expect(created.status).toBe(200);
    expect(created.body.success).toBe(true);
    const layout = created.body.export_layout;
    expect(layout).toEqual({
      id: expect.stringMatching(/^exp_lay_/),
      project_id: project.sandbox.project_id,
      name: "Finance",
      type: "transactions",
      is_default: false,
      configuration: finance.configuration,
      sandbox: true,
      created_at: expect.any(String),
    });
    expect((await client.get(`/exports/layouts/${layout.id}`)).body.export_layout).toEqual(layout);

    const listed = await client.get("/exports/layouts");
    expect(listed.body).toMatchObject({ success: true, count: 1, total_count: 1, has_more: false });
    expect(listed.body.export_layouts).toEqual([layout]);

    const changed = await client.put(`/exports/layouts/${layout.id}`, {
      name: "Finance (EU)",
      is_default: null,
      configuration: { columns: null, time: { format: "unix" }, amount: null },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.export_layout).toMatchObject({
      id: layout.id,
      name: "Finance (EU)",
      type: "transactions",
      configuration: {
        columns: EXPORT_COLUMNS.transactions.map((column) => ({ name: column.name, rename: null })),
        time: { format: "unix" },
        amount: { precision: null, separator: "." },
      },
    });

    const deleted = await client.del(`/exports/layouts/${layout.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await client.get(`/exports/layouts/${layout.id}`)).status).toBe(404);
    const empty = await client.get("/exports/layouts");
    expect(empty.body).toMatchObject({ success: true, export_layouts: [], count: 0, total_count: 0 });
  });

  it("keep one default per type: making another the default clears the first, atomically", async () => {
    const { client } = await environment();
    const builtIn = await client.get("/exports/layouts/default/transactions");
    expect(builtIn.body.export_layout).toMatchObject({ id: null, is_default: true, type: "transactions" });
    expect(builtIn.body.export_layout.configuration.columns).toHaveLength(EXPORT_COLUMNS.transactions.length);

    const first = (await client.post("/exports/layouts", { ...finance, is_default: true })).body
      .export_layout;
    expect(first.is_default).toBe(true);
    const payouts = (
      await client.post("/exports/layouts", {
        name: "Payouts",
        type: "payouts",
        is_default: true,
        configuration: null,
      })
    ).body.export_layout;
    const second = (await client.post("/exports/layouts", { ...finance, name: "Second", is_default: true }))
      .body.export_layout;
    expect(second.is_default).toBe(true);
    expect((await client.get(`/exports/layouts/${first.id}`)).body.export_layout.is_default).toBe(false);
    // Another type's default is its own.
    expect((await client.get(`/exports/layouts/${payouts.id}`)).body.export_layout.is_default).toBe(true);
    expect((await client.get("/exports/layouts/default/transactions")).body.export_layout.id).toBe(second.id);

    // Back to the first by PUT; then not default at all.
    await client.put(`/exports/layouts/${first.id}`, { is_default: true });
    expect((await client.get("/exports/layouts/default/transactions")).body.export_layout.id).toBe(first.id);
    const listed = (await client.get("/exports/layouts?order=asc")).body.export_layouts;
    expect(listed.map((layout: { is_default: boolean }) => layout.is_default)).toEqual([true, true, false]);
    await client.put(`/exports/layouts/${first.id}`, { is_default: false });
    expect((await client.get("/exports/layouts/default/transactions")).body.export_layout.id).toBeNull();

    // Concurrent requests to make each the default: exactly one layout ends up the default.
    await Promise.all([
      client.put(`/exports/layouts/${first.id}`, { is_default: true }),
      client.put(`/exports/layouts/${second.id}`, { is_default: true }),
    ]);
    const after = await Promise.all(
      [first.id, second.id].map(
        async (id) => (await client.get(`/exports/layouts/${id}`)).body.export_layout,
      ),
    );
    const defaults = after.filter((layout) => layout.is_default);
    expect(defaults).toHaveLength(1);
    expect((await client.get("/exports/layouts/default/transactions")).body.export_layout.id).toBe(
      defaults[0].id,
    );

    // Deleting the default leaves the type with the built-in layout.
    await client.del(`/exports/layouts/${defaults[0].id}`);
    expect((await client.get("/exports/layouts/default/transactions")).body.export_layout.id).toBeNull();
  });

  it("offer each type's columns and formats", async () => {
    const { client } = await environment();
    for (const type of ["transactions", "payouts", "payout_items"] as const) {
      const answer = await client.get(`/exports/layouts/options/${type}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        success: true,
        export_layout_configuration_options: configurationOptions(type),
      });
    }
    const options = (await client.get("/exports/layouts/options/transactions")).body
      .export_layout_configuration_options;
    expect(options.time.format).toEqual(TIME_FORMAT_NAMES);
    expect(options.amount).toEqual({ precision: [0, 1, 2, 3, 4], separator: [".", ","] });
    expect(options.columns).toContain("captured_amount");
    expect((await client.get("/exports/layouts/options/invoices")).status).toBe(404);
    expect((await client.get("/exports/layouts/default/invoices")).status).toBe(404);
  });

  it.each([
    [{ name: undefined }, "name"],
    [{ type: "invoices" }, "type"],
    [{ type: undefined }, "type"],
    [{ is_default: "maybe" }, "is_default"],
    [
      { configuration: { columns: [{ name: "nope", rename: null }], time: null, amount: null } },
      "configuration.columns[0].name",
    ],
    [
      { configuration: { columns: [{ name: "id" }, { name: "id" }], time: null, amount: null } },
      "configuration.columns[1].name",
    ],
    [{ configuration: { columns: [], time: null, amount: null } }, "configuration.columns"],
    [
      { configuration: { columns: null, time: { format: "yyyy" }, amount: null } },
      "configuration.time.format",
    ],
    [
      { configuration: { columns: null, time: null, amount: { precision: 7 } } },
      "configuration.amount.precision",
    ],
    [
      { configuration: { columns: null, time: null, amount: { separator: ";" } } },
      "configuration.amount.separator",
    ],
    [
      { type: "payouts", configuration: { columns: [{ name: "invoice_id" }], time: null, amount: null } },
      "configuration.columns[0].name",
    ],
  ])("refuse %j with a 400 naming %s, and store nothing", async (change, field) => {
    const { client } = await environment();
    const answer = await client.post("/exports/layouts", { ...finance, ...change });
    expect(answer.status).toBe(400);
    expect(answer.body.success).toBe(false);
    expect(answer.body.invalid_fields.map((item: { name: string }) => item.name)).toContain(field);
    expect((await client.get("/exports/layouts")).body.total_count).toBe(0);
  });

  it("refuse a PUT that changes the type or names another type's column", async () => {
    const { client } = await environment();
    const layout = (await client.post("/exports/layouts", finance)).body.export_layout;
    const retyped = await client.put(`/exports/layouts/${layout.id}`, { type: "payouts" });
    expect(retyped.status).toBe(400);
    expect(retyped.body.invalid_fields[0].name).toBe("type");
    // The type echoed unchanged is fine, as clients send what they read.
    expect((await client.put(`/exports/layouts/${layout.id}`, { type: "transactions" })).status).toBe(200);
    const wrongColumn = await client.put(`/exports/layouts/${layout.id}`, {
      configuration: { columns: [{ name: "payout_id", rename: null }], time: null, amount: null },
    });
    expect(wrongColumn.status).toBe(400);
    expect(wrongColumn.body.invalid_fields[0].name).toBe("configuration.columns[0].name");
    expect((await client.get(`/exports/layouts/${layout.id}`)).body.export_layout.configuration).toEqual(
      finance.configuration,
    );
  });

  it("belong to their environment: another project, or live, sees none of them", async () => {
    const { client, live } = await environment();
    const other = await environment();
    const layout = (await client.post("/exports/layouts", { ...finance, is_default: true })).body
      .export_layout;
    for (const outsider of [other.client, live]) {
      expect((await outsider.get(`/exports/layouts/${layout.id}`)).status).toBe(404);
      expect((await outsider.put(`/exports/layouts/${layout.id}`, { name: "Mine" })).status).toBe(404);
      expect((await outsider.del(`/exports/layouts/${layout.id}`)).status).toBe(404);
      expect((await outsider.get("/exports/layouts")).body.export_layouts).toEqual([]);
      expect((await outsider.get("/exports/layouts/default/transactions")).body.export_layout.id).toBeNull();
    }
    expect((await client.get(`/exports/layouts/${layout.id}`)).body.export_layout.name).toBe("Finance");
  });

  it("answer the official clients' raw requests: JSON with nulls, query strings with list options", async () => {
    const { project } = await environment();
    const { project_id: projectId, private_key: privateKey } = project.sandbox;
    const headers = {
      authorization: basicAuthorization(projectId, privateKey),
      "content-type": "application/json",
      accept: "application/json",
      "api-version": "1.4.0.0",
    };
    // Python/PHP/Ruby: every key, null when unset; configuration's three keys, each possibly null.
    const created = await sendRaw(local.url, {
      method: "POST",
      target: "/exports/layouts",
      headers,
      body: JSON.stringify({
        name: "Nightly",
        type: "transactions",
        is_default: null,
        configuration: { columns: null, time: null, amount: null },
        expand: null,
      }),
    });
    expect(created.status).toBe(200);
    const layout = JSON.parse(created.text).export_layout;
    expect(layout).toMatchObject({ name: "Nightly", is_default: false });
    // Node: no key for an unset field.
    const node = await sendRaw(local.url, {
      method: "POST",
      target: "/exports/layouts",
      headers,
      body: JSON.stringify({ name: "Node", type: "payout_items" }),
    });
    expect(node.status).toBe(200);
    // List with the options every client adds (Python sends None literals).
    const listed = await sendRaw(local.url, {
      method: "GET",
      target: "/exports/layouts?expand=&filter=&limit=&end_before=&start_after=",
      headers,
    });
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.text)).toMatchObject({ success: true, count: 2 });
    const pythonGet = await sendRaw(local.url, {
      method: "GET",
      target: `/exports/layouts/${layout.id}?expand=None&filter=None`,
      headers,
    });
    expect(pythonGet.status).toBe(200);
    // PUT without `type`; DELETE with a query string; every answer success: true.
    const put = await sendRaw(local.url, {
      method: "PUT",
      target: `/exports/layouts/${layout.id}`,
      headers,
      body: JSON.stringify({ name: "Nightly 2", is_default: true, configuration: null }),
    });
    expect(JSON.parse(put.text)).toMatchObject({
      success: true,
      export_layout: { name: "Nightly 2", is_default: true },
    });
    const options = await sendRaw(local.url, {
      method: "GET",
      target: "/exports/layouts/options/payouts?expand=",
      headers,
    });
    expect(JSON.parse(options.text).export_layout_configuration_options.columns).toContain("sales_volume");
    const deleted = await sendRaw(local.url, {
      method: "DELETE",
      target: `/exports/layouts/${layout.id}?expand=None`,
      headers,
    });
    expect(deleted.status).toBe(200);
    expect(JSON.parse(deleted.text)).toEqual({ success: true });
  });
});

/** Pays `amount` on a fresh invoice with a sandbox card and captures it: one transaction. */
async function capturedTransaction(client: Client, amount: string, currency = "EUR") {
  const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .body.card;
  const invoice = (await client.post("/invoices", { name: "Order", amount, currency })).body.invoice;
  const paid = await client.post(`/invoices/${invoice.id}/capture`, { source: card.id });
  expect(paid.status).toBe(200);
  return paid.body.transaction;
}

describe("exports", () => {
  it("run in the background: pending, then the CSV of the period's transactions in the layout", async () => {
    const { client, project } = await environment();
    const from = new Date(Date.now() - 60_000).toISOString();
    const first = await capturedTransaction(client, "10");
    const second = await capturedTransaction(client, "1234.5");
    const layout = (await client.post("/exports/layouts", finance)).body.export_layout;
    const to = new Date(Date.now() + 60_000).toISOString();

    const requested = await client.post("/exports", { type: "transactions", layout_id: layout.id, from, to });
    expect(requested.status).toBe(200);
    expect(requested.body.export).toMatchObject({
      id: expect.stringMatching(/^exp_/),
      type: "transactions",
      layout_id: layout.id,
      status: "pending",
      rows: null,
      automatic: false,
    });
    const id = requested.body.export.id;

    // The run the export queue's worker makes (the in-process API has no stream poller).
    const run = await runExport(project.sandbox.project_id, id);
    expect(run.kind).toBe("completed");
    const done = (await client.get(`/exports/${id}`)).body.export;
    expect(done).toMatchObject({ status: "completed", rows: 2, error: null });
    expect(done.location).toBe(join(exportsDir, project.sandbox.project_id, done.file_name));
    const csv = await readFile(done.location, "utf8");
    expect(done.size).toBe(Buffer.byteLength(csv));
    expect(csv).toBe(
      `Transaction,Amount,currency\r\n${first.id},"10,00",EUR\r\n${second.id},"1234,50",EUR\r\n`,
    );
    // A second run of a completed export changes nothing.
    expect((await runExport(project.sandbox.project_id, id)).kind).toBe("completed");
    expect((await client.get("/exports")).body).toMatchObject({ success: true, count: 1, exports: [{ id }] });
  });

  it("read only the period asked for, in the built-in layout when none is chosen", async () => {
    const { client, project } = await environment();
    await capturedTransaction(client, "5.00");
    const from = new Date(Date.now() + 3_600_000).toISOString();
    const to = new Date(Date.now() + 7_200_000).toISOString();
    const requested = (await client.post("/exports", { type: "transactions", from, to })).body.export;
    expect(requested.layout_id).toBeNull();
    await runExport(project.sandbox.project_id, requested.id);
    const done = (await client.get(`/exports/${requested.id}`)).body.export;
    expect(done.rows).toBe(0);
    expect(await readFile(done.location, "utf8")).toBe(
      `${EXPORT_COLUMNS.transactions.map((column) => column.name).join(",")}\r\n`,
    );
  });

  it.each([
    [{ type: "invoices" }, "type"],
    [{ from: undefined }, "from"],
    [{ to: "yesterday" }, "to"],
    [{ to: "2026-01-01T00:00:00Z" }, "to"],
    [{ layout_id: "exp_lay_01JZ5Y8W9E0000000000000000" }, "layout_id"],
  ])("refuse %j with a 400 naming %s", async (change, field) => {
    const { client } = await environment();
    const body = {
      type: "transactions",
      from: "2026-02-01T00:00:00Z",
      to: "2026-03-01T00:00:00Z",
      ...change,
    };
    const answer = await client.post("/exports", body);
    expect(answer.status).toBe(400);
    expect(answer.body.invalid_fields.map((item: { name: string }) => item.name)).toContain(field);
    expect((await client.get("/exports")).body.total_count).toBe(0);
  });

  it("refuse another type's layout, and another environment's export", async () => {
    const { client } = await environment();
    const other = await environment();
    const payoutsLayout = (await client.post("/exports/layouts", { name: "P", type: "payouts" })).body
      .export_layout;
    const wrong = await client.post("/exports", {
      type: "transactions",
      layout_id: payoutsLayout.id,
      from: "2026-02-01T00:00:00Z",
      to: "2026-03-01T00:00:00Z",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.invalid_fields[0].name).toBe("layout_id");
    const mine = (
      await client.post("/exports", {
        type: "transactions",
        from: "2026-02-01T00:00:00Z",
        to: "2026-03-01T00:00:00Z",
      })
    ).body.export;
    expect((await other.client.get(`/exports/${mine.id}`)).status).toBe(404);
    expect((await other.client.get("/exports")).body.exports).toEqual([]);
  });
});
