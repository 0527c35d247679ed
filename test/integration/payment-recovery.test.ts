import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { OutcomeUnknown } from "../../shared/gateways/connector.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { killedAtTransaction } from "../support/crash.ts";
import { eventNamesOfTransaction } from "../support/events.ts";

/**
 * Issue 9, items 1 and 2: no exception from a connector leaves a reservation behind unless the
 * outcome is truly unknown, and reservations whose request died are settled by the recovery job
 * from what the gateway recorded.
 */
const local = useInProcessApi("Payment recovery test");
const client = local.sandbox;
const scope = () => local.project.sandbox.project_id;

afterEach(() => {
  vi.restoreAllMocks();
});

async function cardId(number = "4242424242424242"): Promise<string> {
  const { body } = await client.post("/cards", { number, exp_month: 12, exp_year: 2099, cvc2: "123" });
  return body.card.id;
}

async function invoiceId(amount = "10.00"): Promise<string> {
  const { status, body } = await client.post("/invoices", { name: "Order", amount, currency: "USD" });
  expect(status).toBe(200);
  return body.invoice.id;
}

async function transactionOf(invoice: string) {
  return (await client.get(`/invoices/${invoice}/transactions`)).body.transaction;
}

/** The clock once every lease taken now is over. */
function afterLeases() {
  vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
}

const recover = () => recoverReservations({ onlyScope: scope() });

describe("a zero amount", () => {
  it.each(["0", "0.00"])("is refused on an invoice with a 400 naming amount (%s)", async (amount) => {
    const { status, body } = await client.post("/invoices", { name: "Order", amount, currency: "USD" });
    expect(status).toBe(400);
    expect(body.error_type).toBe("request.validation.invalid-amount");
    expect(body.invalid_fields).toEqual([{ name: "amount", message: "must be above zero" }]);
  });

  it("is refused when an invoice is changed to it, and the invoice stays as it was", async () => {
    const invoice = await invoiceId();
    const { status, body } = await client.put(`/invoices/${invoice}`, { amount: "0" });
    expect(status).toBe(400);
    expect(body.invalid_fields).toEqual([{ name: "amount", message: "must be above zero" }]);
    expect((await client.get(`/invoices/${invoice}`)).body.invoice.amount).toBe("10.00");
  });
});

describe("a connector that throws", () => {
  it("leaves no reservation: the attempt is recorded as failed, and a retry pays", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    vi.spyOn(sandboxConnector.card, "authorize").mockRejectedValueOnce(new TypeError("connector bug"));
    const failed = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ success: false, error_type: "gateway.error" });

    const tx = await transactionOf(invoice);
    expect(tx.status).toBe("waiting");
    expect(tx.operations.at(-1)).toMatchObject({
      type: "authorization",
      success: false,
      error_code: "gateway.error",
    });
    // Not locked: void answers at once that there is nothing to void, and authorize works.
    expect((await client.post(`/invoices/${invoice}/void`, {})).body.error_type).toBe(
      "request.transaction.invalid-state",
    );
    const retry = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(retry.status).toBe(200);
    expect(retry.body.transaction.status).toBe("authorized");
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.authorized"]);
  });

  it("settles what the gateway recorded when the connector failed after the gateway acted", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const real = sandboxConnector.card.authorize.bind(sandboxConnector.card);
    vi.spyOn(sandboxConnector.card, "authorize").mockImplementationOnce(async (request) => {
      await real(request);
      throw new Error("connection reset while reading the answer");
    });
    const answer = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(answer.status).toBe(200);
    expect(answer.body.transaction.status).toBe("authorized");
  });

  it("fails a follow-up the gateway never received without locking the transaction", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    await client.post(`/invoices/${invoice}/authorize`, { source });
    vi.spyOn(sandboxConnector, "capture").mockRejectedValueOnce(new Error("socket hang up"));
    expect((await client.post(`/invoices/${invoice}/capture`, {})).status).toBe(502);
    expect((await transactionOf(invoice)).status).toBe("authorized");
    const retry = await client.post(`/invoices/${invoice}/capture`, {});
    expect(retry.status).toBe(200);
    expect(retry.body.transaction.status).toBe("completed");
  });

  it("keeps the reservation only when the outcome is unknown, until the recovery job settles it", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const real = sandboxConnector.card.authorize.bind(sandboxConnector.card);
    vi.spyOn(sandboxConnector.card, "authorize").mockImplementationOnce(async (request) => {
      await real(request);
      throw new OutcomeUnknown("timed out waiting for the gateway");
    });
    const timedOut = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(timedOut.status).toBe(504);
    expect(timedOut.body.error_type).toBe("gateway.timeout");
    const held = await transactionOf(invoice);
    expect(held.status).toBe("waiting");
    expect((await client.post(`/invoices/${invoice}/void`, {})).body.error_type).toBe(
      "request.transaction.operation-in-progress",
    );

    // Before the lease is over the job leaves it; after, it settles what the gateway recorded.
    expect((await recover()).found).toBe(0);
    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    expect((await transactionOf(invoice)).status).toBe("authorized");
    expect(await eventNamesOfTransaction(scope(), held.id)).toEqual(["transaction.authorized"]);
    // …and a second run finds nothing left to do.
    expect((await recover()).found).toBe(0);
  });
});

describe("the recovery job", () => {
  /** Authorizes with the settlement cut off (a crash after the gateway call); returns the invoice. */
  async function crashedAfterGateway(number = "4242424242424242"): Promise<string> {
    const [invoice, source] = [await invoiceId(), await cardId(number)];
    // The first transaction creates the reservation; the second is the settlement.
    const restore = killedAtTransaction(2);
    expect((await client.post(`/invoices/${invoice}/authorize`, { source })).status).toBe(500);
    restore();
    expect((await transactionOf(invoice)).status).toBe("waiting");
    return invoice;
  }

  it("settles an authorization cut by a crash as the gateway recorded it, with its event", async () => {
    const invoice = await crashedAfterGateway();
    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    const tx = await transactionOf(invoice);
    expect(tx.status).toBe("authorized");
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.authorized"]);
  });

  it("settles a decline the gateway recorded as a failed transaction", async () => {
    const invoice = await crashedAfterGateway("4000000000000002");
    afterLeases();
    await recover();
    const tx = await transactionOf(invoice);
    expect(tx.status).toBe("failed");
    expect(tx.error_code).toBe("card.declined");
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.failed"]);
  });

  it("records an operation the gateway never received as a failed attempt, and the retry pays", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    // Killed before the gateway was called: only the reservation exists.
    vi.spyOn(sandboxConnector.card, "authorize").mockImplementationOnce(() => {
      throw new OutcomeUnknown("killed before sending");
    });
    expect((await client.post(`/invoices/${invoice}/authorize`, { source })).status).toBe(504);
    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, notDone: 1 });
    const tx = await transactionOf(invoice);
    expect(tx.status).toBe("waiting");
    expect(tx.operations.at(-1)).toMatchObject({ success: false, error_code: "gateway.error" });
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual([]);
    vi.restoreAllMocks();
    expect((await client.post(`/invoices/${invoice}/authorize`, { source })).body.transaction.status).toBe(
      "authorized",
    );
  });

  it("settles each reservation once when two runs race", async () => {
    const invoices = [await crashedAfterGateway(), await crashedAfterGateway()];
    afterLeases();
    const [first, second] = await Promise.all([recover(), recover()]);
    expect(first.settled + second.settled).toBe(2);
    for (const invoice of invoices) {
      const tx = await transactionOf(invoice);
      expect(tx.status).toBe("authorized");
      expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.authorized"]);
    }
  });

  it("leaves a reservation whose outcome the gateway cannot tell, and settles it at a later run", async () => {
    const invoice = await crashedAfterGateway();
    afterLeases();
    vi.spyOn(sandboxConnector, "lookup").mockRejectedValueOnce(new Error("gateway down"));
    expect(await recover()).toMatchObject({ found: 1, unknown: 1 });
    expect((await transactionOf(invoice)).status).toBe("waiting");
    // The failed run took the reservation over: it lapses again before the next run can settle it.
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 3 * OPERATION_LEASE_MS));
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    expect((await transactionOf(invoice)).status).toBe("authorized");
  });

  it("lets a void of an authorization cut by a crash go through once the lease is over", async () => {
    const invoice = await crashedAfterGateway();
    afterLeases();
    const voided = await client.post(`/invoices/${invoice}/void`, {});
    expect(voided.status).toBe(200);
    expect(voided.body.transaction.status).toBe("voided");
    const tx = await transactionOf(invoice);
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual([
      "transaction.authorized",
      "transaction.voided",
    ]);
  });
});

describe("a capture with a source", () => {
  const realLookup = sandboxConnector.lookup.bind(sandboxConnector);

  it("holds authorization and capture under one reservation and settles both in one write", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const real = sandboxConnector.capture.bind(sandboxConnector);
    // While the capture is at the provider, the transaction is still held by the one reservation.
    let seenDuringCapture: { status: string } | undefined;
    let voidDuringCapture: string | undefined;
    vi.spyOn(sandboxConnector, "capture").mockImplementationOnce(async (request) => {
      seenDuringCapture = await transactionOf(invoice);
      voidDuringCapture = (await client.post(`/invoices/${invoice}/void`, {})).body.error_type;
      return real(request);
    });
    const paid = await client.post(`/invoices/${invoice}/capture`, { source });
    expect(paid.status).toBe(200);
    expect(paid.body.transaction.status).toBe("completed");
    expect(seenDuringCapture?.status).toBe("waiting");
    expect(voidDuringCapture).toBe("request.transaction.operation-in-progress");
    expect(paid.body.transaction.operations.map((op: { type: string }) => op.type)).toEqual([
      "request",
      "authorization",
      "capture",
    ]);
    expect((await eventNamesOfTransaction(scope(), paid.body.transaction.id)).sort()).toEqual([
      "invoice.completed",
      "transaction.authorized",
      "transaction.captured",
    ]);
  });

  it("leaves the capture reserved when its outcome is unknown, and the recovery job settles it", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const real = sandboxConnector.capture.bind(sandboxConnector);
    vi.spyOn(sandboxConnector, "capture").mockImplementationOnce(async (request) => {
      await real(request);
      throw new OutcomeUnknown("timed out waiting for the gateway");
    });
    const timedOut = await client.post(`/invoices/${invoice}/capture`, { source });
    expect(timedOut.status).toBe(504);
    expect((await transactionOf(invoice)).status).toBe("authorized");

    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    const settled = await transactionOf(invoice);
    expect(settled.status).toBe("completed");
    expect(settled.captured_amount).toBe("10.00");
    // The merchant's retry captures nothing twice: the transaction is captured already.
    await client.post(`/invoices/${invoice}/capture`, { source });
    expect((await transactionOf(invoice)).captured_amount).toBe("10.00");
  });

  it("answers the merchant's retry with its capture when the recovery job settled it first", async () => {
    const idempotencyKey = `recovered-${Date.now()}`;
    const { invoice, source } = await crashedCapture(idempotencyKey);
    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    const captures = vi.spyOn(sandboxConnector, "capture");
    const retried = await client.post(`/invoices/${invoice}/capture`, { source }, { idempotencyKey });
    expect(retried.status).toBe(200);
    expect(retried.body.transaction).toMatchObject({ status: "completed", captured_amount: "10.00" });
    expect(retried.body.transaction.operations.at(-1)).not.toHaveProperty("request_key");
    expect(captures).not.toHaveBeenCalled();
    // Another request (another key, or none) is told the invoice is captured already.
    const other = await client.post(
      `/invoices/${invoice}/capture`,
      { source },
      { idempotencyKey: `${idempotencyKey}-2` },
    );
    expect([other.status, other.body.error_type]).toEqual([409, "request.transaction.invalid-state"]);
  });

  it("records a capture declined after its authorization in the same write: failed, both events", async () => {
    const [invoice, source] = [await invoiceId(), await cardId("4000000000000010")];
    const declined = await client.post(`/invoices/${invoice}/capture`, { source });
    expect(declined.status).toBe(400);
    expect(declined.body.error_type).toBe("gateway.declined");
    const tx = await transactionOf(invoice);
    expect(tx).toMatchObject({ status: "failed", authorized_amount: "10.00", captured_amount: "0.00" });
    expect(tx.operations.map((op: { type: string; success: boolean }) => [op.type, op.success])).toEqual([
      ["request", true],
      ["authorization", true],
      ["capture", false],
    ]);
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual([
      "transaction.authorized",
      "transaction.failed",
    ]);
  });

  it("stays reserved while the provider cannot tell about the capture, and a later run settles it", async () => {
    const { invoice } = await crashedCapture();
    afterLeases();
    vi.spyOn(sandboxConnector, "lookup").mockImplementation(async (request) => {
      if (request.kind === "capture") throw new Error("gateway unreachable");
      return realLookup(request);
    });
    expect(await recover()).toMatchObject({ found: 1, unknown: 1 });
    expect((await transactionOf(invoice)).status).toBe("waiting");
    vi.mocked(sandboxConnector.lookup).mockRestore();
    // The failed run took the reservation over: it lapses again before the next run can settle it.
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + 3 * OPERATION_LEASE_MS));
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    expect((await transactionOf(invoice)).status).toBe("completed");
  });

  /** A capture with a source whose one settlement is cut off (a crash after the provider calls). */
  async function crashedCapture(idempotencyKey?: string): Promise<{ invoice: string; source: string }> {
    const [invoice, source] = [await invoiceId(), await cardId()];
    // The reserved transaction, then the one settlement of both operations: lost.
    const restore = killedAtTransaction(2);
    const cut = await client.post(`/invoices/${invoice}/capture`, { source }, { idempotencyKey });
    restore();
    expect(cut.status).toBe(500);
    expect((await transactionOf(invoice)).status).toBe("waiting");
    return { invoice, source };
  }

  it("is settled by the recovery job from both records of the provider, with all its events", async () => {
    const captures = vi.spyOn(sandboxConnector, "capture");
    const { invoice } = await crashedCapture();
    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, settled: 1 });
    const tx = await transactionOf(invoice);
    expect(tx).toMatchObject({ status: "completed", authorized_amount: "10.00", captured_amount: "10.00" });
    expect((await eventNamesOfTransaction(scope(), tx.id)).sort()).toEqual([
      "invoice.completed",
      "transaction.authorized",
      "transaction.captured",
    ]);
    expect(captures).toHaveBeenCalledTimes(1);
  });

  it("is left authorized when the provider never received the capture, and the retry captures", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    // The process dies between the two provider calls: the authorization is recorded, not the capture.
    vi.spyOn(sandboxConnector, "capture").mockRejectedValueOnce(new Error("process killed"));
    vi.spyOn(sandboxConnector, "lookup").mockRejectedValueOnce(new Error("process killed"));
    expect((await client.post(`/invoices/${invoice}/capture`, { source })).status).toBe(504);
    vi.restoreAllMocks();
    // The lookup's failure left the capture reserved on the authorized transaction; the job settles
    // it from the provider's record: never received, so nothing was captured.
    expect((await transactionOf(invoice)).status).toBe("authorized");
    afterLeases();
    expect(await recover()).toMatchObject({ found: 1, notDone: 1 });
    const tx = await transactionOf(invoice);
    expect(tx).toMatchObject({ status: "authorized", captured_amount: "0.00" });
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.authorized"]);
    const retried = await client.post(`/invoices/${invoice}/capture`, { source });
    expect(retried.body.transaction).toMatchObject({ status: "completed", captured_amount: "10.00" });
  });

  it("answers the merchant's retry with its capture once the lease is over, calling no provider again", async () => {
    const idempotencyKey = `chained-${Date.now()}`;
    const { invoice, source } = await crashedCapture(idempotencyKey);
    const authorizations = vi.spyOn(sandboxConnector.card, "authorize");
    const captures = vi.spyOn(sandboxConnector, "capture");
    expect((await client.post(`/invoices/${invoice}/capture`, { source }, { idempotencyKey })).status).toBe(
      409,
    );
    afterLeases();
    const retried = await client.post(`/invoices/${invoice}/capture`, { source }, { idempotencyKey });
    expect(retried.status).toBe(200);
    expect(retried.body.transaction).toMatchObject({ status: "completed", captured_amount: "10.00" });
    expect(authorizations).not.toHaveBeenCalled();
    expect(captures).not.toHaveBeenCalled();
    // Stored as the key's answer: a later replay is the same.
    const replay = await client.post(`/invoices/${invoice}/capture`, { source }, { idempotencyKey });
    expect(replay.body).toEqual(retried.body);
  });
});
