import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { dynamo } from "../../shared/db/client.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { CAPTURE_WINDOW_MS, OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { eventNamesOfTransaction } from "../support/events.ts";

const local = useInProcessApi("Payments test");
const client = local.sandbox;

afterEach(() => {
  vi.restoreAllMocks();
});

const key = () => `key-${crypto.randomUUID()}`;

async function card(number = "4242424242424242"): Promise<string> {
  const { status, body } = await client.post("/cards", {
    number,
    exp_month: 12,
    exp_year: 2099,
    cvc2: "123",
  });
  expect(status).toBe(200);
  return body.card.id;
}

async function invoice(fields: Record<string, unknown> = {}): Promise<string> {
  const { status, body } = await client.post("/invoices", {
    name: "Order",
    amount: "10.00",
    currency: "USD",
    ...fields,
  });
  expect(status).toBe(200);
  return body.invoice.id;
}

async function authorized(number?: string): Promise<{ invoiceId: string; transactionId: string }> {
  const invoiceId = await invoice();
  const { status, body } = await client.post(`/invoices/${invoiceId}/authorize`, {
    source: await card(number),
  });
  expect(status).toBe(200);
  return { invoiceId, transactionId: body.transaction.id };
}

async function captured(): Promise<{ invoiceId: string; transactionId: string }> {
  const paid = await authorized();
  expect((await client.post(`/invoices/${paid.invoiceId}/capture`, {})).status).toBe(200);
  return paid;
}

/** Events recorded for a transaction, by name (read from the table, consistently enough locally). */
const eventsOf = (transactionId: string) =>
  eventNamesOfTransaction(local.project.sandbox.project_id, transactionId);

async function transaction(id: string) {
  const { status, body } = await client.get(`/transactions/${id}`);
  expect(status).toBe(200);
  return body.transaction;
}

/** The invariants every state must keep, whatever happened. */
function expectInvariants(tx: Record<string, unknown>) {
  const n = (value: unknown) => Number(value);
  expect(n(tx.captured_amount)).toBeLessThanOrEqual(n(tx.authorized_amount));
  expect(n(tx.refunded_amount)).toBeLessThanOrEqual(n(tx.captured_amount));
}

describe("authorize and capture", () => {
  it("authorizes an invoice, then captures the same transaction, recording both events", async () => {
    const invoiceId = await invoice();
    const auth = await client.post(`/invoices/${invoiceId}/authorize`, { source: await card() });
    expect(auth.status).toBe(200);
    expect(auth.body.customer_action).toEqual({});
    expect(auth.body.transaction).toMatchObject({
      status: "authorized",
      authorized_amount: "10.00",
      captured_amount: "0.00",
      available_amount: "10.00",
      authorized: true,
      captured: false,
      currency: "USD",
      invoice_id: invoiceId,
    });
    const capture = await client.post(`/invoices/${invoiceId}/capture`, {});
    expect(capture.status).toBe(200);
    expect(capture.body.transaction).toMatchObject({
      id: auth.body.transaction.id,
      status: "completed",
      captured_amount: "10.00",
      captured: true,
    });
    expect(capture.body.customer_action).toEqual({});
    expect(capture.body.transaction.operations.map((op: { type: string }) => op.type)).toEqual([
      "request",
      "authorization",
      "capture",
    ]);
    expect(await eventsOf(auth.body.transaction.id)).toEqual([
      "invoice.completed",
      "transaction.authorized",
      "transaction.captured",
    ]);
    const listed = await client.get(`/invoices/${invoiceId}/transactions`);
    expect(listed.body.transaction.id).toBe(auth.body.transaction.id);
    const edited = await client.put(`/invoices/${invoiceId}`, { name: "Changed" });
    expect(edited.status).toBe(409);
  });

  it("captures with a source on a fresh invoice: authorization happens implicitly first", async () => {
    const invoiceId = await invoice();
    const { status, body } = await client.post(`/invoices/${invoiceId}/capture`, { source: await card() });
    expect(status).toBe(200);
    expect(body.transaction).toMatchObject({
      status: "completed",
      authorized_amount: "10.00",
      captured_amount: "10.00",
    });
  });

  it("records a decline as a failed transaction and answers 410 with the card error, also to a retry", async () => {
    const invoiceId = await invoice();
    const source = await card("4000000000002180");
    const calls = vi.spyOn(sandboxConnector.card, "authorize");
    const first = await client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(first.status).toBe(410);
    expect(first.body.error_type).toBe("card.do-not-honor");
    const again = await client.post(`/invoices/${invoiceId}/authorize`, { source });
    expect(again.status).toBe(410);
    expect(again.body.error_type).toBe("card.do-not-honor");
    expect(calls).toHaveBeenCalledTimes(1);
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({ status: "failed", error_code: "card.do-not-honor" });
    expect(await eventsOf(tx.id)).toEqual(["transaction.failed"]);
  });

  it.each([
    ["4242424242424242", 200, "completed"],
    ["5555555555554444", 200, "completed"],
    ["4000000000000002", 410, "failed"],
    ["4000000000000010", 400, "failed"],
    ["4000000000000028", 410, "failed"],
    ["4000000000000036", 200, "completed"],
    ["4000000000000044", 410, "failed"],
    ["4000000000000069", 200, "completed"],
    ["4000000000000077", 200, "completed"],
    ["4000000000003055", 200, "completed"],
    ["4000000000003220", 410, "failed"],
    ["4000000000002206", 410, "failed"],
  ])(
    "pays with test card %s: capture answers %i and the transaction is %s",
    async (number, status, state) => {
      const invoiceId = await invoice();
      const answer = await client.post(`/invoices/${invoiceId}/capture`, { source: await card(number) });
      expect(answer.status).toBe(status);
      const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
      expect(tx.status).toBe(state);
      expectInvariants(tx);
    },
  );

  it("never captures more than is authorized: a 400 naming amount, with or without a source", async () => {
    const captures = vi.spyOn(sandboxConnector, "capture");
    const fresh = await invoice();
    const withSource = await client.post(`/invoices/${fresh}/capture`, {
      source: await card(),
      amount: "10.01",
    });
    expect(withSource.status).toBe(400);
    expect(withSource.body.invalid_fields).toEqual([
      { name: "amount", message: "must be at most the invoice's amount, 10.00" },
    ]);
    // Refused before anything moved: the invoice was not even authorized.
    expect((await client.get(`/invoices/${fresh}/transactions`)).body.transaction).toBeNull();

    const { invoiceId } = await authorized();
    const { status, body } = await client.post(`/invoices/${invoiceId}/capture`, { amount: "20.00" });
    expect(status).toBe(400);
    expect(body.invalid_fields).toEqual([
      { name: "amount", message: "must be at most the authorized amount, 10.00" },
    ]);
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({ status: "authorized", captured_amount: "0.00" });
    expect(captures).not.toHaveBeenCalled();
    // The whole authorization still captures.
    expect((await client.post(`/invoices/${invoiceId}/capture`, {})).body.transaction.captured_amount).toBe(
      "10.00",
    );
  });

  it("refuses a capture more than 7 days after the authorization", async () => {
    const { invoiceId } = await authorized();
    const later = new Date(Date.now() + CAPTURE_WINDOW_MS + 1000);
    vi.spyOn(clock, "now").mockReturnValue(later);
    const { status, body } = await client.post(`/invoices/${invoiceId}/capture`, {});
    expect(status).toBe(409);
    expect(body.error_type).toBe("request.transaction.capture-window-expired");
  });

  it("sets the customer's currency with its first paid invoice and refuses another currency", async () => {
    const customer = (await client.post("/customers", {})).body.customer.id;
    const first = await invoice({ customer_id: customer });
    expect((await client.post(`/invoices/${first}/authorize`, { source: await card() })).status).toBe(200);
    expect((await client.get(`/customers/${customer}`)).body.customer.currency).toBe("USD");
    const other = await invoice({ customer_id: customer, currency: "EUR" });
    const refused = await client.post(`/invoices/${other}/authorize`, { source: await card() });
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("request.customer.currency-mismatch");
  });
});

describe("void, increment and refunds", () => {
  it("voids an authorization", async () => {
    const { invoiceId, transactionId } = await authorized();
    const { status, body } = await client.post(`/invoices/${invoiceId}/void`, {});
    expect(status).toBe(200);
    expect(body.transaction).toMatchObject({ status: "voided", voided_amount: "10.00", voided: true });
    expect((await client.post(`/invoices/${invoiceId}/capture`, {})).status).toBe(409);
    expect(await eventsOf(transactionId)).toEqual(["transaction.authorized", "transaction.voided"]);
  });

  it("increments an incremental authorization only", async () => {
    const invoiceId = await invoice();
    await client.post(`/invoices/${invoiceId}/authorize`, { source: await card(), incremental: true });
    const { status, body } = await client.post(`/invoices/${invoiceId}/increment_authorization`, {
      amount: "2.50",
    });
    expect(status).toBe(200);
    expect(body.transaction.authorized_amount).toBe("12.50");
    const plain = await authorized();
    const refused = await client.post(`/invoices/${plain.invoiceId}/increment_authorization`, {
      amount: "1.00",
    });
    expect(refused.status).toBe(409);
  });

  it("refunds in parts, never more than captured, and lists and fetches refunds", async () => {
    const { invoiceId, transactionId } = await captured();
    const first = await client.post(`/invoices/${invoiceId}/refunds`, {
      amount: "4.00",
      reason: "customer_request",
    });
    expect(first.status).toBe(200);
    expect(first.body.refund).toMatchObject({
      amount: "4.00",
      reason: "customer_request",
      has_failed: false,
    });
    const tooMuch = await client.post(`/transactions/${transactionId}/refunds`, { amount: "6.01" });
    expect(tooMuch.status).toBe(400);
    const rest = await client.post(`/transactions/${transactionId}/refunds`, { amount: "6.00" });
    expect(rest.body.transaction).toMatchObject({ status: "refunded", refunded_amount: "10.00" });
    const list = await client.get(`/transactions/${transactionId}/refunds`);
    expect(list.body.refunds).toHaveLength(2);
    const one = await client.get(`/transactions/${transactionId}/refunds/${first.body.refund.id}`);
    expect(one.body.refund.id).toBe(first.body.refund.id);
  });
});

describe("concurrency", () => {
  it("lets exactly one of 50 concurrent captures succeed and captures the money once", async () => {
    const { invoiceId, transactionId } = await authorized();
    const calls = vi.spyOn(sandboxConnector, "capture");
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => client.post(`/invoices/${invoiceId}/capture`, {})),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer.status).toBe(409);
    expect(calls).toHaveBeenCalledTimes(1);
    expect((await transaction(transactionId)).captured_amount).toBe("10.00");
    expect((await eventsOf(transactionId)).filter((name) => name === "transaction.captured")).toHaveLength(1);
  });

  it("creates one transaction for concurrent authorizations of one invoice", async () => {
    const invoiceId = await invoice();
    const source = await card();
    const calls = vi.spyOn(sandboxConnector.card, "authorize");
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => client.post(`/invoices/${invoiceId}/authorize`, { source })),
    );
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const ids = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.transaction.id));
    expect(ids.size).toBe(1);
    expect(calls).toHaveBeenCalledTimes(1);
  });

  it("never refunds more than captured under concurrent partial refunds", async () => {
    const { transactionId } = await captured();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        client.post(`/transactions/${transactionId}/refunds`, { amount: "3.00" }),
      ),
    );
    for (const answer of answers) expect(answer.status).toBeLessThan(500);
    const tx = await transaction(transactionId);
    expectInvariants(tx);
    expect(Number(tx.refunded_amount)).toBe(
      3 * tx.refunds.filter((r: { has_failed: boolean }) => !r.has_failed).length,
    );
  });
});

describe("Idempotency-Key on payments", () => {
  it("replays the first answer and moves no money again", async () => {
    const invoiceId = await invoice();
    const source = await card();
    const authorize = vi.spyOn(sandboxConnector.card, "authorize");
    const capture = vi.spyOn(sandboxConnector, "capture");
    const idempotencyKey = key();
    const first = await client.post(`/invoices/${invoiceId}/capture`, { source }, { idempotencyKey });
    const replay = await client.post(`/invoices/${invoiceId}/capture`, { source }, { idempotencyKey });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(authorize).toHaveBeenCalledTimes(1);
    expect(capture).toHaveBeenCalledTimes(1);
  });
});

type Step = "authorize" | "capture" | "void" | "refund";

/** Prepares an invoice for `step` and returns the request that performs it. */
async function prepare(
  step: Step,
): Promise<{ path: string; body: Record<string, unknown>; invoiceId: string }> {
  if (step === "authorize") {
    const invoiceId = await invoice();
    return { invoiceId, path: `/invoices/${invoiceId}/authorize`, body: { source: await card() } };
  }
  if (step === "refund") {
    const { invoiceId } = await captured();
    return { invoiceId, path: `/invoices/${invoiceId}/refunds`, body: { amount: "4.00" } };
  }
  const { invoiceId } = await authorized();
  return { invoiceId, path: `/invoices/${invoiceId}/${step}`, body: {} };
}

const WRITES = new Set(["PutCommand", "UpdateCommand", "DeleteCommand", "TransactWriteCommand"]);

describe("faults at each DynamoDB write", () => {
  it.each<Step>(["authorize", "capture", "void", "refund"])(
    "%s: a fault at any write keeps every invariant, and the retry completes the request",
    async (step) => {
      // Count the writes of one undisturbed request.
      const probe = await prepare(step);
      const send = dynamo.send.bind(dynamo);
      let writes = 0;
      const counter = vi.spyOn(dynamo, "send").mockImplementation(((command: {
        constructor: { name: string };
      }) => {
        if (WRITES.has(command.constructor.name)) writes += 1;
        return send(command as never);
      }) as never);
      expect((await client.post(probe.path, probe.body, { idempotencyKey: key() })).status).toBe(200);
      counter.mockRestore();
      expect(writes).toBeGreaterThan(1);

      for (let failAt = 1; failAt <= writes; failAt++) {
        const target = await prepare(step);
        const idempotencyKey = key();
        let seen = 0;
        const spy = vi.spyOn(dynamo, "send").mockImplementation(((command: {
          constructor: { name: string };
        }) => {
          if (WRITES.has(command.constructor.name) && ++seen === failAt) {
            return Promise.reject(new Error(`Injected fault at write ${failAt}`));
          }
          return send(command as never);
        }) as never);
        const faulty = await client.post(target.path, target.body, { idempotencyKey });
        spy.mockRestore();

        const tx = (await client.get(`/invoices/${target.invoiceId}/transactions`)).body.transaction;
        if (tx) {
          expectInvariants(tx);
          const events = await eventsOf(tx.id);
          if (tx.status === "authorized") expect(events).toContain("transaction.authorized");
          if (tx.status === "waiting") expect(events).toEqual([]);
          if (step === "capture" && tx.status === "authorized")
            expect(events).not.toContain("transaction.captured");
        }

        // The retry, once any reservation the fault left behind has lapsed.
        vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
        const retry = await client.post(target.path, target.body, { idempotencyKey });
        vi.restoreAllMocks();
        expect(retry.status, `fault at write ${failAt}: ${faulty.status} then ${retry.text}`).toBe(200);
        const after = (await client.get(`/invoices/${target.invoiceId}/transactions`)).body.transaction;
        expectInvariants(after);
        const expected = {
          authorize: "authorized",
          capture: "completed",
          void: "voided",
          refund: "completed",
        }[step];
        expect(after.status).toBe(expected);
        if (step === "refund") expect(after.refunded_amount).toBe("4.00");
        const events = await eventsOf(after.id);
        const name = {
          authorize: "transaction.authorized",
          capture: "transaction.captured",
          void: "transaction.voided",
          refund: "transaction.refunded",
        }[step];
        expect(events.filter((event) => event === name)).toHaveLength(1);
      }
    },
    120_000,
  );
});
