import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { handler } from "../../functions/jobs/capture-invoice.ts";
import { lambdaContext } from "../../lib/local/lambda.ts";
import { createLocalScheduler } from "../../lib/local/scheduler.ts";
import { clock } from "../../shared/clock.ts";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { captureScheduleName } from "../../shared/scheduling/port.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { eventNamesOfTransaction } from "../support/events.ts";

const local = useInProcessApi("Auto capture test");
const client = local.sandbox;
const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

afterEach(() => {
  vi.restoreAllMocks();
});

const captureJob = (job: unknown) => handler(job, lambdaContext("jobs/capture-invoice", 30_000));

function setNow(at: Date) {
  vi.spyOn(clock, "now").mockImplementation(() => new Date(at));
}

async function authorizedWithAutoCapture(fields: Record<string, unknown> = {}) {
  const card = await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
  const invoice = await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" });
  const invoiceId: string = invoice.body.invoice.id;
  const at = new Date(clock.now().getTime() + HOUR);
  const auth = await client.post(`/invoices/${invoiceId}/authorize`, {
    source: card.body.card.id,
    auto_capture_at: at.toISOString(),
    ...fields,
  });
  expect(auth.status).toBe(200);
  expect(auth.body.transaction).toMatchObject({ status: "authorized", auto_capture_at: at.toISOString() });
  return { invoiceId, transactionId: auth.body.transaction.id as string, at };
}

async function transaction(id: string) {
  return (await client.get(`/transactions/${id}`)).body.transaction;
}

const eventsOf = (transactionId: string) =>
  eventNamesOfTransaction(local.project.sandbox.project_id, transactionId);

async function scheduledJob(invoiceId: string) {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.scheduledJob(captureScheduleName(invoiceId)) }),
  );
  return Item;
}

describe("auto_capture_at", () => {
  it("captures nothing before the time, then captures exactly once when it is reached", async () => {
    const { invoiceId, transactionId, at } = await authorizedWithAutoCapture();
    expect(await scheduledJob(invoiceId)).toMatchObject({
      due_at: at.toISOString(),
      job: { kind: "capture-invoice", scope: local.project.sandbox.project_id, invoiceId },
    });
    const scheduler = createLocalScheduler();

    setNow(new Date(at.getTime() - 1000));
    await scheduler.tick();
    expect((await transaction(transactionId)).status).toBe("authorized");

    setNow(new Date(at.getTime() + 1000));
    await scheduler.tick();
    expect(await transaction(transactionId)).toMatchObject({ status: "completed", captured_amount: "10.00" });
    expect(await scheduledJob(invoiceId)).toBeUndefined();

    const captures = vi.spyOn(sandboxConnector, "capture");
    await scheduler.tick();
    const duplicate = { kind: "capture-invoice", scope: local.project.sandbox.project_id, invoiceId };
    await expect(captureJob(duplicate)).resolves.toEqual({ outcome: "already-captured" });
    expect(captures).not.toHaveBeenCalled();
    expect(await eventsOf(transactionId)).toEqual([
      "invoice.completed",
      "transaction.authorized",
      "transaction.captured",
    ]);
  });

  it("fires a job that fell due while the stack was down, from a new scheduler over the same table", async () => {
    const { transactionId, at } = await authorizedWithAutoCapture();
    const before = createLocalScheduler();
    await before.tick();
    await before.stop();

    setNow(new Date(at.getTime() + 2 * HOUR));
    const afterRestart = createLocalScheduler();
    await afterRestart.tick();
    expect((await transaction(transactionId)).status).toBe("completed");
  });

  it("captures capture_amount only, when given", async () => {
    const { transactionId, at } = await authorizedWithAutoCapture({ capture_amount: "4.00" });
    setNow(new Date(at.getTime() + 1000));
    await createLocalScheduler().tick();
    expect(await transaction(transactionId)).toMatchObject({
      status: "completed",
      captured_amount: "4.00",
      authorized_amount: "10.00",
    });
  });

  it("is cancelled by a void before the time: nothing is captured", async () => {
    const { invoiceId, transactionId, at } = await authorizedWithAutoCapture();
    expect((await client.post(`/invoices/${invoiceId}/void`, {})).status).toBe(200);
    expect(await scheduledJob(invoiceId)).toBeUndefined();
    setNow(new Date(at.getTime() + 1000));
    await createLocalScheduler().tick();
    expect(await transaction(transactionId)).toMatchObject({ status: "voided", captured_amount: "0.00" });
    const duplicate = { kind: "capture-invoice", scope: local.project.sandbox.project_id, invoiceId };
    await expect(captureJob(duplicate)).resolves.toEqual({ outcome: "nothing-to-capture" });
  });

  it("stays when a capture after a 3DS challenge fails alone: the authorization stands", async () => {
    const card = await client.post("/cards", { number: "4000000000000101", exp_month: 12, exp_year: 2099 });
    const invoiceId: string = (
      await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" })
    ).body.invoice.id;
    const at = new Date(clock.now().getTime() + HOUR).toISOString();
    const challenged = await client.post(`/invoices/${invoiceId}/authorize`, {
      source: card.body.card.id,
      auto_capture_at: at,
    });
    expect(challenged.body.customer_action.type).toBe("url");
    // The shopper approves on the challenge page; the web library then captures with the card, and
    // the gateway fails that capture and records nothing.
    const page = await fetch(challenged.body.customer_action.value, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "result=approved",
    });
    expect(page.status).toBe(200);
    vi.spyOn(sandboxConnector, "capture").mockRejectedValueOnce(new Error("connection reset"));
    const failed = await client.post(`/invoices/${invoiceId}/capture`, { source: card.body.card.id });
    expect([failed.status, failed.body.error_type], JSON.stringify(failed.body)).toEqual([
      502,
      "gateway.error",
    ]);
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({ status: "authorized", auto_capture_at: at, captured_amount: "0.00" });
    expect(await scheduledJob(invoiceId)).toBeDefined();
    // A void then drops it (and leaves no job for the other tests' scheduler ticks).
    expect((await client.post(`/invoices/${invoiceId}/void`, {})).status).toBe(200);
    expect(await scheduledJob(invoiceId)).toBeUndefined();
  });

  it("is cancelled by a manual capture", async () => {
    const { invoiceId } = await authorizedWithAutoCapture();
    expect((await client.post(`/invoices/${invoiceId}/capture`, {})).status).toBe(200);
    expect(await scheduledJob(invoiceId)).toBeUndefined();
  });

  it("runs a failed job again later, and captures then", async () => {
    const { invoiceId, transactionId, at } = await authorizedWithAutoCapture();
    const errors: string[] = [];
    const scheduler = createLocalScheduler({ errorLog: (message) => errors.push(message) });
    vi.spyOn(sandboxConnector, "capture").mockRejectedValueOnce(new Error("gateway unreachable"));
    setNow(new Date(at.getTime() + 1000));
    await scheduler.tick();
    expect(errors).toEqual([expect.stringContaining("it will run again")]);
    expect(await scheduledJob(invoiceId)).toMatchObject({ attempts: 1 });

    // The failed attempt is recorded and holds nothing: the next run captures.
    setNow(new Date(at.getTime() + 5 * 60 * 1000));
    await scheduler.tick();
    expect((await transaction(transactionId)).status).toBe("completed");
    expect(await eventsOf(transactionId)).toEqual([
      "invoice.completed",
      "transaction.authorized",
      "transaction.captured",
    ]);
  });

  it.each([
    ["in the past", -1000],
    ["now", 0],
    ["beyond the 7-day capture window", 7 * DAY + 1000],
  ])("refuses an auto_capture_at %s with a 400 naming the field", async (_, offset) => {
    const card = await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
    const invoice = await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" });
    const now = new Date();
    setNow(now);
    const { status, body } = await client.post(`/invoices/${invoice.body.invoice.id}/authorize`, {
      source: card.body.card.id,
      auto_capture_at: new Date(now.getTime() + offset).toISOString(),
    });
    expect(status).toBe(400);
    expect(body.invalid_fields).toEqual([{ name: "auto_capture_at", message: expect.any(String) }]);
  });

  it("refuses capture_amount without auto_capture_at, or above the invoice's amount", async () => {
    const card = await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
    const invoice = await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" });
    const path = `/invoices/${invoice.body.invoice.id}/authorize`;
    const alone = await client.post(path, { source: card.body.card.id, capture_amount: "4.00" });
    expect(alone.status).toBe(400);
    expect(alone.body.invalid_fields[0].name).toBe("capture_amount");
    const tooMuch = await client.post(path, {
      source: card.body.card.id,
      auto_capture_at: new Date(Date.now() + HOUR).toISOString(),
      capture_amount: "10.01",
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.invalid_fields[0].name).toBe("capture_amount");
  });
});
