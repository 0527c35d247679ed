import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { SQSEvent } from "aws-lambda";
import ssh2 from "ssh2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler as deliverWorker } from "../../functions/exports/deliver.ts";
import { handler as runWorker } from "../../functions/exports/run.ts";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { EXPORT_TYPES } from "../../shared/exports/catalogue.ts";
import { runDailyExports } from "../../shared/exports/daily.ts";
import { findDeliveryRequest } from "../../shared/exports/delivery-request.ts";
import { dailyExportId } from "../../shared/exports/export.ts";
import { findExport } from "../../shared/exports/export-store.ts";
import { hostKeyFingerprint } from "../../shared/exports/sftp-delivery.ts";
import { resetExportStorage } from "../../shared/exports/storage/index.ts";
import { createProject } from "../../shared/projects/project.ts";
import { SANDBOX_PRIVATE_NETWORK_VARIABLE } from "../../shared/webhooks/settings.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { newHostKey, newKeyPair, startSftpServer, type TestSftpServer } from "../support/sftp-server.ts";

const { utils } = ssh2;

/**
 * Automatic daily exports delivered to a real SFTP server (ssh2's `Server`, started here on a random
 * port): password and private-key logins, the file's bytes in the chosen layout, the host key
 * pinned on first use and a changed key refused; SFTP settings never answer their secrets.
 */
const local = useInProcessApi("SFTP delivery test");

let exportsDir: string;
const servers: TestSftpServer[] = [];
beforeAll(async () => {
  // The test's SFTP servers are on loopback: allowed to sandbox environments, as in the local stack.
  process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "allow";
  exportsDir = await mkdtemp(join(tmpdir(), "sftp-exports-test-"));
  process.env.EXPORTS_DIR = exportsDir;
  resetExportStorage();
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await rm(exportsDir, { recursive: true, force: true });
});

async function server(options: Parameters<typeof startSftpServer>[0]) {
  const started = await startSftpServer(options);
  servers.push(started);
  return started;
}

const fingerprintOf = (hostKey: string) => {
  const parsed = utils.parseKey(hostKey);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return hostKeyFingerprint(key.getPublicSSH() as Buffer);
};

/**
 * What the table's stream and the two export queues do with a day's automatic exports (the
 * in-process API runs no pollers): the export queue's worker runs each, then the delivery queue's
 * worker gets one message per delivery requested. Answers the messages that failed (to be received
 * again).
 */
async function deliverRequested(scope: string, day: string): Promise<string[]> {
  const message = (type: string, exportId: string) => ({
    messageId: `${type}-${day}`,
    body: JSON.stringify({ scope, exportId }),
  });
  const runs = [];
  const deliveries = [];
  for (const type of EXPORT_TYPES) {
    const exportId = dailyExportId(scope, type, day);
    if (await findExport(scope, exportId)) runs.push(message(type, exportId));
  }
  const ran = await runWorker({ Records: runs } as unknown as SQSEvent);
  for (const type of EXPORT_TYPES) {
    const exportId = dailyExportId(scope, type, day);
    if (await findDeliveryRequest(scope, exportId)) deliveries.push(message(type, exportId));
  }
  const delivered = await deliverWorker({ Records: deliveries } as unknown as SQSEvent);
  return [...ran.batchItemFailures, ...delivered.batchItemFailures].map((failure) => failure.itemIdentifier);
}

async function environment() {
  const project = await createProject("SFTP delivery");
  return { project, scope: project.sandbox.project_id, client: api(local.url, project.sandbox) };
}

async function capturedTransaction(client: Client, amount: string) {
  const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
    .body.card;
  const invoice = (await client.post("/invoices", { name: "Order", amount, currency: "EUR" })).body.invoice;
  const paid = await client.post(`/invoices/${invoice.id}/capture`, { source: card.id });
  expect(paid.status).toBe(200);
  return paid.body.transaction;
}

/** The layout of the tests: renamed columns, a date-time format, one decimal, a comma. */
const layout = {
  name: "Bank",
  type: "transactions",
  is_default: true,
  configuration: {
    columns: [
      { name: "id", rename: "Reference" },
      { name: "created_at", rename: "Date" },
      { name: "captured_amount", rename: 'Captured "net"' },
      { name: "currency", rename: null },
    ],
    time: { format: "date_time" },
    amount: { precision: 1, separator: "," },
  },
};

const dateTime = (iso: string) => iso.slice(0, 19).replace("T", " ");

describe("SFTP delivery of the daily exports", () => {
  it("delivers the day's CSV in the default layout with a password, and pins the host key", async () => {
    const sftp = await server({ username: "acme", password: "s3cret-pass" });
    const { client, scope, project } = await environment();
    const first = await capturedTransaction(client, "12.35");
    const second = await capturedTransaction(client, "7");
    expect((await client.post("/exports/layouts", layout)).status).toBe(200);
    const put = await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `127.0.0.1:${sftp.port}`,
      username: "acme",
      password: "s3cret-pass",
      private_key: null,
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true });

    const day = first.created_at.slice(0, 10);
    await runDailyExports(scope, day);
    expect(await deliverRequested(scope, day)).toEqual([]);

    const expected =
      `Reference,Date,"Captured ""net""",currency\r\n` +
      `${first.id},${dateTime(first.created_at)},"12,4",EUR\r\n` +
      `${second.id},${dateTime(second.created_at)},"7,0",EUR\r\n`;
    const delivered = sftp.files.get(`transactions_${day}.csv`);
    expect(delivered?.toString("utf8")).toBe(expected);
    expect([...sftp.files.keys()]).toEqual([`transactions_${day}.csv`]);
    expect(sftp.logins).toEqual(["password"]);

    const exported = (await client.get(`/exports/${dailyExportId(scope, "transactions", day)}`)).body.export;
    expect(exported).toMatchObject({
      automatic: true,
      status: "completed",
      rows: 2,
      size: Buffer.byteLength(expected),
      delivery: {
        status: "delivered",
        remote_path: `transactions_${day}.csv`,
        host_key_fingerprint: fingerprintOf(sftp.hostKey),
        error: null,
      },
    });
    const settings = (await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings;
    expect(settings).toEqual({
      enabled: true,
      endpoint: `127.0.0.1:${sftp.port}`,
      username: "acme",
      authentication: "password",
      host_key_fingerprint: fingerprintOf(sftp.hostKey),
      last_error: null,
    });
    // Only the default layout's types run: no payouts layout, no payouts file.
    expect(sftp.files.size).toBe(1);

    // Run again (a retried daily close): nothing is delivered twice.
    sftp.files.clear();
    await runDailyExports(scope, day);
    expect(await deliverRequested(scope, day)).toEqual([]);
    expect(sftp.files.size).toBe(0);

    // The password is sealed: neither answered nor stored in clear.
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: config.tableName, Key: keys.sftpSettings(scope) }),
    );
    expect(JSON.stringify(Item)).not.toContain("s3cret-pass");
    expect(JSON.stringify(settings)).not.toContain("s3cret-pass");
    expect(project.sandbox.project_id).toBe(scope);
  });

  it("logs in with a private key", async () => {
    const userKey = newKeyPair();
    const sftp = await server({ username: "finance", publicKey: userKey.public });
    const { client, scope } = await environment();
    const paid = await capturedTransaction(client, "99.99");
    await client.post("/exports/layouts", layout);
    const put = await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `127.0.0.1:${sftp.port}`,
      username: "finance",
      private_key: userKey.private,
    });
    expect(put.status).toBe(200);
    const day = paid.created_at.slice(0, 10);
    await runDailyExports(scope, day);
    expect(await deliverRequested(scope, day)).toEqual([]);
    expect(sftp.logins).toEqual(["publickey"]);
    expect(sftp.files.get(`transactions_${day}.csv`)?.toString("utf8")).toBe(
      `Reference,Date,"Captured ""net""",currency\r\n${paid.id},${dateTime(paid.created_at)},"100,0",EUR\r\n`,
    );
    const settings = (await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings;
    expect(settings.authentication).toBe("private_key");
    expect(JSON.stringify(settings)).not.toContain("PRIVATE KEY");
  });

  it("refuses a server whose host key changed, and says so on the export and the settings", async () => {
    const first = await server({ username: "acme", password: "pw-1" });
    const { client, scope } = await environment();
    const paid = await capturedTransaction(client, "10.00");
    await client.post("/exports/layouts", layout);
    await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `127.0.0.1:${first.port}`,
      username: "acme",
      password: "pw-1",
    });
    const day = paid.created_at.slice(0, 10);
    await runDailyExports(scope, day);
    expect(await deliverRequested(scope, day)).toEqual([]);
    expect(first.files.size).toBe(1);
    const pinned = fingerprintOf(first.hostKey);

    // Another server (another host key) now answers at the same address.
    await first.close();
    const impostor = await server({
      username: "acme",
      password: "pw-1",
      port: first.port,
      hostKey: newHostKey(),
    });
    // The next day's export (yesterday here: a day of its own) is refused delivery.
    const previousDay = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await runDailyExports(scope, previousDay);
    expect(await deliverRequested(scope, previousDay)).toEqual([]);
    expect(impostor.files.size).toBe(0);
    expect(impostor.logins).toEqual([]);
    const refused = (await client.get(`/exports/${dailyExportId(scope, "transactions", previousDay)}`)).body
      .export;
    expect(refused.status).toBe("completed");
    expect(refused.delivery).toMatchObject({
      status: "failed",
      host_key_fingerprint: fingerprintOf(impostor.hostKey),
    });
    expect(refused.delivery.error).toContain("is not the one pinned");
    const settings = (await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings;
    expect(settings.host_key_fingerprint).toBe(pinned);
    expect(settings.last_error).toContain("is not the one pinned");
  });

  it("records a wrong password as a clear delivery error", async () => {
    const sftp = await server({ username: "acme", password: "right" });
    const { client, scope } = await environment();
    const paid = await capturedTransaction(client, "3.00");
    await client.post("/exports/layouts", layout);
    await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `127.0.0.1:${sftp.port}`,
      username: "acme",
      password: "wrong",
    });
    const day = paid.created_at.slice(0, 10);
    await runDailyExports(scope, day);
    expect(await deliverRequested(scope, day)).toEqual([]);
    const exported = (await client.get(`/exports/${dailyExportId(scope, "transactions", day)}`)).body.export;
    expect(exported.delivery).toMatchObject({ status: "failed" });
    expect(exported.delivery.error).toContain("refused the password of acme");
    expect(exported.delivery.error).not.toContain("wrong");
    expect(sftp.files.size).toBe(0);
  });
});

describe("a delivery that may pass later", () => {
  it("is recorded as failed and handed back to the queue; the next try delivers", async () => {
    const { client, scope } = await environment();
    const paid = await capturedTransaction(client, "8.00");
    await client.post("/exports/layouts", layout);
    // A port nothing listens on yet: the connection is refused.
    const later = await startSftpServer({ username: "acme", password: "pw" });
    const port = later.port;
    await later.close();
    await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `127.0.0.1:${port}`,
      username: "acme",
      password: "pw",
    });
    const day = paid.created_at.slice(0, 10);
    await runDailyExports(scope, day);
    expect(await deliverRequested(scope, day)).toEqual([`transactions-${day}`]);
    const failed = (await client.get(`/exports/${dailyExportId(scope, "transactions", day)}`)).body.export;
    expect(failed.delivery).toMatchObject({ status: "failed", host_key_fingerprint: null });
    expect(failed.delivery.error).toContain(`The SSH connection to 127.0.0.1:${port} failed`);

    const back = await server({ username: "acme", password: "pw", port });
    expect(await deliverRequested(scope, day)).toEqual([]);
    expect(back.files.get(`transactions_${day}.csv`)?.toString("utf8")).toContain(paid.id);
    const delivered = (await client.get(`/exports/${dailyExportId(scope, "transactions", day)}`)).body.export;
    expect(delivered.delivery).toMatchObject({ status: "delivered", error: null });
    expect((await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings.last_error).toBeNull();
  });
});

describe("SFTP settings", () => {
  it("are the caller's own environment's only: another project's id answers 404", async () => {
    const { client, scope } = await environment();
    const other = await environment();
    const body = { endpoint: "sftp.example.com:22", username: "u", password: "p" };
    expect((await client.put(`/projects/${other.scope}/sftp-settings`, body)).status).toBe(404);
    expect((await client.get(`/projects/${other.scope}/sftp-settings`)).status).toBe(404);
    expect((await client.del(`/projects/${other.scope}/sftp-settings`)).status).toBe(404);
    expect(
      (await other.client.get(`/projects/${other.scope}/sftp-settings`)).body.sftp_settings.enabled,
    ).toBe(false);
    expect((await client.put(`/projects/${scope}/sftp-settings`, body)).status).toBe(200);
    expect(
      (await other.client.get(`/projects/${other.scope}/sftp-settings`)).body.sftp_settings.enabled,
    ).toBe(false);
  });

  it("refuse a private address in live, and a sandbox delivery to one where private networks are not allowed", async () => {
    const { project, client, scope } = await environment();
    const live = api(local.url, project.live);
    for (const endpoint of ["127.0.0.1:22", "10.1.2.3:22", "169.254.169.254:22", "[::1]:22"]) {
      const answer = await live.put(`/projects/${project.live.project_id}/sftp-settings`, {
        endpoint,
        username: "u",
        password: "p",
      });
      expect(answer.status, endpoint).toBe(400);
      expect(answer.body.invalid_fields[0]).toMatchObject({ name: "endpoint" });
    }
    // A deployed stage's sandbox: the address is checked when the delivery connects.
    const sftp = await server({ username: "acme", password: "pw" });
    const paid = await capturedTransaction(client, "4.00");
    await client.post("/exports/layouts", layout);
    await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `localhost:${sftp.port}`,
      username: "acme",
      password: "pw",
    });
    const day = paid.created_at.slice(0, 10);
    await runDailyExports(scope, day);
    process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "";
    try {
      expect(await deliverRequested(scope, day)).toEqual([]);
    } finally {
      process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "allow";
    }
    const refused = (await client.get(`/exports/${dailyExportId(scope, "transactions", day)}`)).body.export;
    expect(refused.delivery.status).toBe("failed");
    expect(refused.delivery.error).toMatch(
      /must be a public address: localhost is (127\.0\.0\.1|::1), a loopback address/,
    );
    expect(sftp.files.size).toBe(0);
    expect(sftp.logins).toEqual([]);
  });

  it("start disabled, and DELETE disables them with success", async () => {
    const { client, scope } = await environment();
    const empty = await client.get(`/projects/${scope}/sftp-settings`);
    expect(empty.body).toEqual({
      success: true,
      sftp_settings: {
        enabled: false,
        endpoint: null,
        username: null,
        authentication: null,
        host_key_fingerprint: null,
        last_error: null,
      },
    });
    await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: "[::1]:2222",
      username: "u",
      password: "p",
    });
    expect((await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings).toMatchObject({
      enabled: true,
      endpoint: "[::1]:2222",
    });
    const deleted = await client.del(`/projects/${scope}/sftp-settings`);
    expect(deleted.body).toEqual({ success: true });
    expect((await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings.enabled).toBe(false);
  });

  it.each([
    [{ endpoint: "sftp.example.com" }, "endpoint"],
    [{ endpoint: "sftp.example.com:70000" }, "endpoint"],
    [{ endpoint: undefined }, "endpoint"],
    [{ username: "" }, "username"],
    [{ password: undefined }, "password"],
    [{ private_key: "not a key" }, "private_key"],
    [{ private_key: newKeyPair().public }, "private_key"],
  ])("refuse %j with a 400 naming %s", async (change, field) => {
    const { client, scope } = await environment();
    const body = { endpoint: "sftp.example.com:22", username: "u", password: "p", ...change };
    if ("private_key" in change) body.password = undefined as unknown as string;
    const answer = await client.put(`/projects/${scope}/sftp-settings`, body);
    expect(answer.status).toBe(400);
    expect(answer.body.invalid_fields.map((item: { name: string }) => item.name)).toContain(field);
    expect((await client.get(`/projects/${scope}/sftp-settings`)).body.sftp_settings.enabled).toBe(false);
  });

  it("refuse a password and a private key together", async () => {
    const { client, scope } = await environment();
    const answer = await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: "sftp.example.com:22",
      username: "u",
      password: "p",
      private_key: newKeyPair().private,
    });
    expect(answer.status).toBe(400);
    expect(answer.body.invalid_fields[0].name).toBe("private_key");
  });
});

describe("a sandbox day on the clock", () => {
  it("closes the day: its payout, and the day's transactions, payouts and payout items delivered by SFTP", async () => {
    const sftp = await server({ username: "acme", password: "day-pass" });
    const { client, scope } = await environment();
    await client.put(`/projects/${scope}/sftp-settings`, {
      endpoint: `127.0.0.1:${sftp.port}`,
      username: "acme",
      password: "day-pass",
    });
    await client.post("/exports/layouts", layout);
    await client.post("/exports/layouts", {
      name: "Payouts",
      type: "payouts",
      is_default: true,
      configuration: {
        columns: [
          { name: "id", rename: "Payout" },
          { name: "amount", rename: null },
          { name: "sales_transactions", rename: "Sales" },
          { name: "fees", rename: null },
        ],
        time: null,
        amount: { precision: null, separator: "." },
      },
    });
    await client.post("/exports/layouts", {
      name: "Items",
      type: "payout_items",
      is_default: true,
      configuration: {
        columns: [
          { name: "transaction_id", rename: "Transaction" },
          { name: "type", rename: null },
          { name: "amount", rename: null },
        ],
        time: null,
        amount: null,
      },
    });

    // The next day on the environment's clock, 10:00: two payments; then past midnight.
    const now = Date.parse((await client.get("/sandbox/clock")).body.clock.now);
    const day = new Date(now + 86_400_000).toISOString().slice(0, 10);
    expect((await client.post("/sandbox/clock", { advance_to: `${day}T10:00:00.000Z` })).status).toBe(200);
    const first = await capturedTransaction(client, "20.00");
    const second = await capturedTransaction(client, "5.50");
    expect(first.created_at.slice(0, 10)).toBe(day);
    const midnight = new Date(Date.parse(`${day}T00:01:00.000Z`) + 86_400_000).toISOString();
    const advanced = await client.post("/sandbox/clock", { advance_to: midnight });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);

    // The close recorded the day's exports: their runs and deliveries are the queues' work.
    expect(sftp.files.size).toBe(0);
    expect(await deliverRequested(scope, day)).toEqual([]);
    const payouts = (await client.get("/payouts")).body.payouts;
    expect(payouts).toHaveLength(1);
    const payout = payouts[0];
    expect(sftp.files.get(`transactions_${day}.csv`)?.toString("utf8")).toBe(
      `Reference,Date,"Captured ""net""",currency\r\n` +
        `${first.id},${dateTime(first.created_at)},"20,0",EUR\r\n` +
        `${second.id},${dateTime(second.created_at)},"5,5",EUR\r\n`,
    );
    expect(sftp.files.get(`payouts_${day}.csv`)?.toString("utf8")).toBe(
      `Payout,amount,Sales,fees\r\n${payout.id},${payout.amount},2,${payout.fees}\r\n`,
    );
    const items = (await client.get(`/payouts/${payout.id}/items`)).body.items;
    const itemLines = [...items]
      .sort((a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1))
      .map(
        (item: { transaction_id: string; type: string; amount: string }) =>
          `${item.transaction_id},${item.type},${item.amount}\r\n`,
      )
      .join("");
    expect(sftp.files.get(`payout_items_${day}.csv`)?.toString("utf8")).toBe(
      `Transaction,type,amount\r\n${itemLines}`,
    );
    expect(items.map((item: { transaction_id: string }) => item.transaction_id).sort()).toEqual(
      [first.id, second.id].sort(),
    );
  });
});
