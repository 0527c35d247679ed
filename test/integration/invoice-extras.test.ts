import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { type AuthorizeRequest, OutcomeUnknown } from "../../shared/gateways/connector.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { killedAtTransaction } from "../support/crash.ts";
import { eventNamesOfTransaction } from "../support/events.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 21, the payments core's invoice extras: 3-D Secure without paying (`POST
 * /invoices/{id}/three-d-s` and `/authenticate`, one operation), and payouts to a card (`POST
 * /invoices/{id}/payout`), as the official clients send them.
 */
const local = useInProcessApi("Invoice extras test");
const client = local.sandbox;
const scope = () => local.project.sandbox.project_id;

const CHALLENGE_CARD = "4000000000000101";
const FRICTIONLESS_CARD = "4000000000003055";

afterEach(() => {
  vi.restoreAllMocks();
});

async function cardId(number = "4242424242424242", on: Client = client): Promise<string> {
  const { status, body } = await on.post("/cards", { number, exp_month: 12, exp_year: 2099, cvc2: "123" });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.card.id;
}

async function invoiceId(amount = "10.00", on: Client = client): Promise<string> {
  const { status, body } = await on.post("/invoices", { name: "Order", amount, currency: "USD" });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.invoice.id;
}

async function transactionOf(invoice: string, on: Client = client) {
  return (await on.get(`/invoices/${invoice}/transactions`)).body.transaction;
}

/** The shopper's browser answering the sandbox's challenge page. */
function answerChallenge(url: string, result: "approved" | "failed") {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `result=${result}`,
    redirect: "manual",
  });
}

/** A request as the Python, PHP and Ruby libraries send it: JSON, every key they know, null when unset. */
async function raw(method: string, target: string, body?: Record<string, unknown>) {
  const { project_id: projectId, private_key: privateKey } = local.project.sandbox;
  const answer = await sendRaw(local.url, {
    method,
    target,
    headers: {
      authorization: basicAuthorization(projectId, privateKey),
      accept: "*/*",
      ...(body ? { "content-type": "application/json" } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
  return { status: answer.status, body: JSON.parse(answer.text) as any };
}

/** What the sandbox connector was asked to authorize, in order. */
function watchAuthorizations(): AuthorizeRequest[] {
  const seen: AuthorizeRequest[] = [];
  const authorize = sandboxConnector.card.authorize.bind(sandboxConnector.card);
  vi.spyOn(sandboxConnector.card, "authorize").mockImplementation((request) => {
    seen.push(request);
    return authorize(request);
  });
  return seen;
}

/** The clock once every lease taken now is over. */
function afterLeases() {
  vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
}

describe("POST /invoices/{id}/three-d-s: 3-D Secure without paying", () => {
  it("authenticates the cardholder with a challenge and reserves nothing; the authorization then asks for no challenge", async () => {
    const [invoice, source] = [await invoiceId(), await cardId(CHALLENGE_CARD)];
    const authorizations = watchAuthorizations();

    const started = await client.post(`/invoices/${invoice}/three-d-s`, { source, enable_three_d_s_2: null });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.customer_action).toMatchObject({
      type: "url",
      value: expect.stringMatching(/\/3ds\//),
    });
    // The Node client settles its promise only with a transaction beside the action.
    expect(started.body.transaction).toMatchObject({
      invoice_id: invoice,
      status: "waiting",
      three_d_s_status: "pending",
      authorized_amount: "0.00",
      authorized: false,
    });
    expect(started.body.transaction.operations.map((made: { type: string }) => made.type)).toEqual([
      "request",
      "three_d_s_check",
    ]);

    expect((await answerChallenge(started.body.customer_action.value, "approved")).status).toBe(200);
    const done = await client.post(`/invoices/${invoice}/three-d-s`, { source, enable_three_d_s_2: null });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.customer_action).toEqual({});
    expect(done.body.transaction).toMatchObject({
      status: "waiting",
      three_d_s_status: "challenge-passed",
      authorized: false,
      authorized_amount: "0.00",
    });
    // Authenticated, not authorized: nothing was asked of the issuer's authorization.
    expect(authorizations).toHaveLength(0);
    expect(await eventNamesOfTransaction(scope(), done.body.transaction.id)).toEqual(["invoice.pending"]);

    const paid = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.customer_action).toEqual({});
    expect(paid.body.transaction).toMatchObject({
      status: "authorized",
      authorized_amount: "10.00",
      three_d_s_status: "challenge-passed",
    });
    // One authorization, given the completed authentication (no second round was asked).
    expect(authorizations).toHaveLength(1);
    expect(authorizations[0]?.threeDS.authenticated).toEqual({
      status: "challenge-passed",
      reference: expect.stringMatching(/^sandbox\.authentication\./),
    });
    const checks = paid.body.transaction.operations.filter(
      (made: { type: string }) => made.type === "three_d_s_check",
    );
    expect(checks.every((made: { success: boolean }) => made.success)).toBe(true);
  });

  it("runs the 3DS2 rounds (fingerprint, then frictionless) with gway_req_ answers, and an authorize after it is frictionless", async () => {
    const [invoice, source] = [await invoiceId(), await cardId(FRICTIONLESS_CARD)];
    const first = await client.post(`/invoices/${invoice}/three-d-s`, { source, enable_three_d_s_2: true });
    expect(first.body.customer_action).toMatchObject({ type: "fingerprint" });
    const page = await (await fetch(first.body.customer_action.value)).text();
    const answer = /data-answer="(gway_req_[A-Za-z0-9+/=]+)"/.exec(page)?.[1] ?? "";
    expect(answer).not.toBe("");

    const second = await client.post(`/invoices/${invoice}/three-d-s`, {
      source: answer,
      enable_three_d_s_2: true,
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.customer_action).toEqual({});
    expect(second.body.transaction).toMatchObject({ status: "waiting", three_d_s_status: "frictionless" });
    // The same answer again is a replay: where it stands, nothing asked twice.
    const replay = await client.post(`/invoices/${invoice}/three-d-s`, {
      source: answer,
      enable_three_d_s_2: true,
    });
    expect(replay.body.transaction.operations).toEqual(second.body.transaction.operations);

    const authorizations = watchAuthorizations();
    const paid = await client.post(`/invoices/${invoice}/capture`, { source, enable_three_d_s_2: true });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.customer_action).toEqual({});
    expect(paid.body.transaction).toMatchObject({ status: "completed", three_d_s_status: "frictionless" });
    expect(authorizations[0]?.threeDS.authenticated?.status).toBe("frictionless");
  });

  it("lets the authorization that follows set its own options: incremental, auto_capture_at, metadata", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    expect((await client.post(`/invoices/${invoice}/three-d-s`, { source })).status).toBe(200);
    const autoCaptureAt = new Date(Date.now() + 24 * 3600 * 1000).toISOString();
    const paid = await client.post(`/invoices/${invoice}/authorize`, {
      source,
      incremental: true,
      auto_capture_at: autoCaptureAt,
      metadata: { order: "42" },
    });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.transaction).toMatchObject({
      status: "authorized",
      auto_capture_at: autoCaptureAt,
      metadata: { order: "42" },
    });
    const raised = await client.post(`/invoices/${invoice}/increment_authorization`, { amount: "2.00" });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    expect(raised.body.transaction.authorized_amount).toBe("12.00");
  });

  it("starts over when the authorization comes with another card: a new challenge, the former page gone", async () => {
    const invoice = await invoiceId();
    const [first, other] = [await cardId(CHALLENGE_CARD), await cardId(CHALLENGE_CARD)];
    const started = await client.post(`/invoices/${invoice}/three-d-s`, { source: first });
    const formerPage: string = started.body.customer_action.value;
    expect((await answerChallenge(formerPage, "approved")).status).toBe(200);
    expect(
      (await client.post(`/invoices/${invoice}/three-d-s`, { source: first })).body.transaction
        .three_d_s_status,
    ).toBe("challenge-passed");

    const authorizations = watchAuthorizations();
    const paid = await client.post(`/invoices/${invoice}/authorize`, { source: other });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.customer_action).toMatchObject({ type: "url" });
    expect(paid.body.customer_action.value).not.toBe(formerPage);
    expect(paid.body.transaction).toMatchObject({
      card_id: other,
      status: "waiting",
      three_d_s_status: "pending",
    });
    expect(authorizations[0]?.threeDS.authenticated).toBeUndefined();
    expect((await fetch(formerPage)).status).toBe(404);

    expect((await answerChallenge(paid.body.customer_action.value, "approved")).status).toBe(200);
    const done = await client.post(`/invoices/${invoice}/authorize`, { source: other });
    expect(done.body.transaction).toMatchObject({
      status: "authorized",
      three_d_s_status: "challenge-passed",
    });
  });

  it("answers a failed authentication as a decline, leaves the invoice unpaid, and a payment then starts over", async () => {
    const [invoice, source] = [await invoiceId(), await cardId(CHALLENGE_CARD)];
    const started = await client.post(`/invoices/${invoice}/three-d-s`, { source });
    expect((await answerChallenge(started.body.customer_action.value, "failed")).status).toBe(200);
    const failed = await client.post(`/invoices/${invoice}/three-d-s`, { source });
    expect(failed.status).toBe(410);
    expect(failed.body.error_type).toBe("card.failed-three-d-s");
    const tx = await transactionOf(invoice);
    expect(tx).toMatchObject({ status: "waiting", three_d_s_status: "failed", authorized: false });

    const again = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.customer_action).toMatchObject({ type: "url" });
  });

  it("needs no round for a card without 3DS, and refuses an invoice already being paid with 409", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const done = await client.post(`/invoices/${invoice}/three-d-s`, { source });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.customer_action).toEqual({});
    expect(done.body.transaction).toMatchObject({ status: "waiting", three_d_s_status: "not-applicable" });
    expect((await client.post(`/invoices/${invoice}/authorize`, { source })).body.transaction.status).toBe(
      "authorized",
    );

    const refused = await client.post(`/invoices/${invoice}/three-d-s`, { source });
    expect(refused.status).toBe(409);
    expect(refused.body.error_type).toBe("request.transaction.invalid-state");
  });

  it("answers another project's invoice and an unknown one 404, and a missing source 400 naming it", async () => {
    const other = await createProject("Invoice extras, another merchant");
    const stranger = api(local.url, other.sandbox);
    const theirs = await invoiceId("10.00", stranger);
    const source = await cardId();
    const foreign = await client.post(`/invoices/${theirs}/three-d-s`, { source });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error_type).toBe("resource.invoice.not-found");
    expect((await transactionOf(theirs, stranger)) ?? null).toBeNull();

    const missing = await client.post(`/invoices/${await invoiceId()}/three-d-s`, { source: null });
    expect(missing.status).toBe(400);
    expect(missing.body.invalid_fields).toEqual([{ name: "source", message: "is required" }]);
  });
});

describe("an authentication cut by a crash", () => {
  /** Starts 3DS with the challenge card with the settlement cut off; returns the invoice and card. */
  async function crashedAuthentication() {
    const [invoice, source] = [await invoiceId(), await cardId(CHALLENGE_CARD)];
    const restore = killedAtTransaction(2);
    expect((await client.post(`/invoices/${invoice}/three-d-s`, { source })).status).toBe(500);
    restore();
    expect((await transactionOf(invoice)).three_d_s_status).toBe("not-applicable");
    // Held meanwhile: another request waits.
    expect((await client.post(`/invoices/${invoice}/three-d-s`, { source })).status).toBe(409);
    return { invoice, source };
  }

  it("is settled by the recovery job from the gateway's record: the round it asked for, with its event", async () => {
    const { invoice } = await crashedAuthentication();
    afterLeases();
    expect(await recoverReservations({ onlyScope: scope() })).toMatchObject({ found: 1, settled: 1 });
    const tx = await transactionOf(invoice);
    expect(tx).toMatchObject({ status: "waiting", three_d_s_status: "pending", authorized: false });
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["invoice.pending"]);
  });

  it("is settled first by the authorization that meets it, which then answers the round", async () => {
    const { invoice, source } = await crashedAuthentication();
    afterLeases();
    const paid = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.customer_action).toMatchObject({ type: "url" });
    expect(paid.body.transaction).toMatchObject({ status: "waiting", three_d_s_status: "pending" });
    vi.restoreAllMocks();
    expect((await answerChallenge(paid.body.customer_action.value, "approved")).status).toBe(200);
    const done = await client.post(`/invoices/${invoice}/authorize`, { source });
    expect(done.body.transaction).toMatchObject({
      status: "authorized",
      three_d_s_status: "challenge-passed",
    });
  });
});

describe("POST /invoices/{id}/authenticate", () => {
  it("is the same operation, answered as authorize answers, with authorize's keys null as the libraries send them", async () => {
    const [invoice, source] = [await invoiceId(), await cardId(CHALLENGE_CARD)];
    const body = {
      source,
      retry_drop_liability_shift: null,
      allow_fallback_to_sale: null,
      override_mac_blocking: null,
      external_three_d_s: null,
      save_source: null,
      provision_network_token: null,
      capture_amount: null,
      enable_three_d_s_2: null,
      auto_capture_at: null,
      metadata: null,
      incremental: null,
      invoice_line_items: null,
      transaction_link_id: null,
    };
    const started = await raw("POST", `/invoices/${invoice}/authenticate`, body);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({
      success: true,
      customer_action: { type: "url" },
      transaction: { status: "waiting", three_d_s_status: "pending" },
    });
    // The same exchange through the other route: the same action until it is answered.
    const same = await raw("POST", `/invoices/${invoice}/three-d-s`, { source, enable_three_d_s_2: null });
    expect(same.body.customer_action).toEqual(started.body.customer_action);
    expect(same.body.transaction.operations).toEqual(started.body.transaction.operations);
  });

  it("answers the literal path the Node and Ruby clients send 404 resource.invoice.not-found, and writes nothing", async () => {
    const source = await cardId();
    const answer = await raw("POST", "/invoices/:invoice_id/authenticate", {
      source,
      enable_three_d_s_2: null,
    });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ success: false, error_type: "resource.invoice.not-found" });
    // Node omits unset keys; the answer is the same.
    const node = await raw("POST", "/invoices/:invoice_id/authenticate", { source });
    expect(node.status).toBe(404);
    expect(node.body.error_type).toBe("resource.invoice.not-found");
  });
});

describe("POST /invoices/{id}/payout", () => {
  it("pays the invoice's amount out to the card: a completed transaction with its payout operation and event", async () => {
    const [invoice, source] = [await invoiceId("25.00"), await cardId()];
    const paid = await client.post(`/invoices/${invoice}/payout`, {
      source,
      metadata: { reason: "winnings" },
    });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.success).toBe(true);
    expect(paid.body.transaction).toMatchObject({
      invoice_id: invoice,
      card_id: source,
      status: "completed",
      amount: "25.00",
      authorized_amount: "0.00",
      captured_amount: "0.00",
      available_amount: "0.00",
      metadata: { reason: "winnings" },
    });
    expect(paid.body.transaction.operations.at(-1)).toMatchObject({
      type: "payout",
      amount: "25.00",
      success: true,
    });
    expect(await eventNamesOfTransaction(scope(), paid.body.transaction.id)).toEqual([
      "transaction.paid_out",
    ]);
    expect((await client.get(`/invoices/${invoice}`)).body.invoice.transaction_id).toBe(
      paid.body.transaction.id,
    );
  });

  it("pays out to a customer token of the invoice's customer", async () => {
    const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
    const token = (await client.post(`/customers/${customer.id}/tokens`, { source: await cardId() })).body
      .token;
    const invoice = (
      await client.post("/invoices", {
        name: "Refund",
        amount: "3.00",
        currency: "USD",
        customer_id: customer.id,
      })
    ).body.invoice.id;
    const paid = await client.post(`/invoices/${invoice}/payout`, { source: token.id });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.transaction).toMatchObject({ token_id: token.id, status: "completed" });
  });

  it("records a declined payout as failed; a retry gets the same decline without calling the gateway again", async () => {
    const [invoice, source] = [await invoiceId(), await cardId("4000000000005126")];
    const payouts = vi.spyOn(sandboxConnector, "payout");
    const declined = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(declined.status).toBe(410);
    expect(declined.body.error_type).toBe("card.not-supported");
    const tx = await transactionOf(invoice);
    expect(tx).toMatchObject({ status: "failed", error_code: "card.not-supported" });
    expect(tx.operations.at(-1)).toMatchObject({ type: "payout", success: false });
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.failed"]);

    const again = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(again.status).toBe(410);
    expect(again.body.error_type).toBe("card.not-supported");
    expect(payouts).toHaveBeenCalledTimes(1);
  });

  it("declines a payout to a card that declines every payment with that card's code", async () => {
    const [invoice, source] = [await invoiceId(), await cardId("4000000000002222")];
    const declined = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(declined.status).toBe(410);
    expect(declined.body.error_type).toBe("card.stolen");
  });

  it("replays the first answer to a retry with the same Idempotency-Key, paying out once", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const payouts = vi.spyOn(sandboxConnector, "payout");
    const first = await client.post(
      `/invoices/${invoice}/payout`,
      { source },
      { idempotencyKey: `payout-${invoice}` },
    );
    const second = await client.post(
      `/invoices/${invoice}/payout`,
      { source },
      { idempotencyKey: `payout-${invoice}` },
    );
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(payouts).toHaveBeenCalledTimes(1);
    // Without the key, the invoice's state refuses it.
    const third = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(third.status).toBe(409);
    expect(third.body.error_type).toBe("request.invoice.paid-out");
    expect(payouts).toHaveBeenCalledTimes(1);
  });

  it("pays out once when two requests race: one wins, the other is refused with 409", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const payouts = vi.spyOn(sandboxConnector, "payout");
    const answers = await Promise.all([
      client.post(`/invoices/${invoice}/payout`, { source }),
      client.post(`/invoices/${invoice}/payout`, { source }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(payouts).toHaveBeenCalledTimes(1);
    const tx = await transactionOf(invoice);
    expect(tx.operations.filter((made: { type: string }) => made.type === "payout")).toHaveLength(1);
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.paid_out"]);
  });

  it("leaves a payout cut by a crash reserved, and the recovery job settles it from the gateway's record", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    // The first transaction creates the reservation; the second, the settlement, never lands.
    const restore = killedAtTransaction(2);
    expect((await client.post(`/invoices/${invoice}/payout`, { source })).status).toBe(500);
    restore();
    const cut = await transactionOf(invoice);
    expect(cut.status).toBe("waiting");
    // Still held: another request may not pay out meanwhile.
    expect((await client.post(`/invoices/${invoice}/payout`, { source })).status).toBe(409);

    afterLeases();
    expect(await recoverReservations({ onlyScope: scope() })).toMatchObject({ found: 1, settled: 1 });
    const tx = await transactionOf(invoice);
    expect(tx.status).toBe("completed");
    expect(tx.operations.filter((made: { type: string }) => made.type === "payout")).toHaveLength(1);
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.paid_out"]);
    expect((await client.post(`/invoices/${invoice}/payout`, { source })).body.error_type).toBe(
      "request.invoice.paid-out",
    );
  });

  it("keeps a payout whose answer was lost reserved (504), and the recovery job settles it as the gateway recorded it", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    const payout = sandboxConnector.payout.bind(sandboxConnector);
    const payouts = vi.spyOn(sandboxConnector, "payout").mockImplementationOnce(async (request) => {
      await payout(request);
      throw new OutcomeUnknown("the answer was lost after sending");
    });
    const lost = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(lost.status).toBe(504);
    expect(lost.body.error_type).toBe("gateway.timeout");
    // The retry finds it held: nothing is sent again.
    expect((await client.post(`/invoices/${invoice}/payout`, { source })).status).toBe(409);
    expect(payouts).toHaveBeenCalledTimes(1);

    afterLeases();
    expect(await recoverReservations({ onlyScope: scope() })).toMatchObject({ found: 1, settled: 1 });
    const tx = await transactionOf(invoice);
    expect(tx.status).toBe("completed");
    expect(await eventNamesOfTransaction(scope(), tx.id)).toEqual(["transaction.paid_out"]);
    expect(payouts).toHaveBeenCalledTimes(1);
  });

  it("records a payout the gateway never received as a failed attempt, and the next request pays out", async () => {
    const [invoice, source] = [await invoiceId(), await cardId()];
    vi.spyOn(sandboxConnector, "payout").mockRejectedValueOnce(new TypeError("connector bug"));
    const notDone = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(notDone.status).toBe(502);
    expect(notDone.body.error_type).toBe("gateway.error");
    vi.restoreAllMocks();
    const failed = await transactionOf(invoice);
    expect(failed.status).toBe("waiting");
    expect(failed.operations.at(-1)).toMatchObject({
      type: "payout",
      success: false,
      error_code: "gateway.error",
    });

    const paid = await client.post(`/invoices/${invoice}/payout`, { source });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.transaction.status).toBe("completed");
  });

  it("refuses an invoice already paid, and a paid-out invoice refuses payments, with 409", async () => {
    const [paidInvoice, source] = [await invoiceId(), await cardId()];
    expect((await client.post(`/invoices/${paidInvoice}/capture`, { source })).body.transaction.status).toBe(
      "completed",
    );
    const refused = await client.post(`/invoices/${paidInvoice}/payout`, { source });
    expect(refused.status).toBe(409);
    expect(refused.body.error_type).toBe("request.invoice.already-paid");

    const paidOut = await invoiceId();
    expect((await client.post(`/invoices/${paidOut}/payout`, { source })).status).toBe(200);
    for (const path of ["authorize", "capture"]) {
      const answer = await client.post(`/invoices/${paidOut}/${path}`, { source });
      expect(answer.status, path).toBe(409);
      expect(answer.body.error_type, path).toBe("request.invoice.paid-out");
    }
    expect((await client.post(`/invoices/${paidOut}/capture`, {})).status).toBe(409);
    expect((await client.post(`/invoices/${paidOut}/void`, {})).status).toBe(409);
    expect((await client.post(`/invoices/${paidOut}/refunds`, {})).status).toBeGreaterThanOrEqual(400);
    expect((await transactionOf(paidOut)).refunded_amount).toBe("0.00");
  });

  it.each([
    ["stripe", { secret_key: "sk_test_4eC39HqLyjWDarjtT1zdp7dc", webhook_secret: "whsec_test" }],
    [
      "adyen",
      {
        api_key: "AQEyhmfxLI3MaBFLw0m",
        merchant_account: "AcmeECOM",
        hmac_key: "44782DEF547AAA06C910C43932B1EB0C",
      },
    ],
  ])(
    "answers a %s configuration, which cannot pay out to cards, with a 400 naming gateway_configuration_id",
    async (gateway, settings) => {
      const project = await createProject(`Invoice extras, ${gateway} merchant`);
      const merchant = api(local.url, project.sandbox);
      const made = await merchant.post(`/gateways/${gateway}/gateway-configurations`, {
        name: gateway,
        settings,
      });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      const configuration: string = made.body.gateway_configuration.id;
      const [invoice, source] = [
        await invoiceId("10.00", merchant),
        await cardId("4242424242424242", merchant),
      ];

      const pinned = await merchant.post(`/invoices/${invoice}/payout`, {
        source,
        gateway_configuration_id: configuration,
        force_gateway_configuration_id: true,
      });
      expect(pinned.status).toBe(400);
      expect(pinned.body.error_type).toBe("request.validation.gateway-payout-not-supported");
      expect(pinned.body.invalid_fields).toEqual([
        { name: "gateway_configuration_id", message: expect.stringContaining("cannot pay out to cards") },
      ]);
      // 3-D Secure without paying is no operation of theirs here either.
      const authenticating = await merchant.post(`/invoices/${invoice}/three-d-s`, {
        source,
        gateway_configuration_id: configuration,
      });
      expect(authenticating.status).toBe(400);
      expect(authenticating.body.invalid_fields[0].name).toBe("gateway_configuration_id");
      expect((await transactionOf(invoice, merchant)) ?? null).toBeNull();

      // Without a configuration named, the sandbox one (which pays out) is chosen.
      const routed = await merchant.post(`/invoices/${invoice}/payout`, { source });
      expect(routed.status, JSON.stringify(routed.body)).toBe(200);
      expect(routed.body.transaction.gateway_name).toBe("sandbox");
    },
  );

  it("takes the clients' raw requests: Python and PHP without metadata, Ruby with every key null, Node without unset keys", async () => {
    const source = await cardId();
    const configuration = (await client.get("/gateway-configurations?filter=card-payments")).body
      .gateway_configurations[0].id as string;
    const python = await raw("POST", `/invoices/${await invoiceId()}/payout`, {
      gateway_configuration_id: null,
      source,
      force_gateway_configuration_id: null,
    });
    expect(python.status, JSON.stringify(python.body)).toBe(200);
    expect(python.body).toMatchObject({ success: true, transaction: { status: "completed" } });
    const ruby = await raw("POST", `/invoices/${await invoiceId()}/payout`, {
      gateway_configuration_id: configuration,
      source,
      force_gateway_configuration_id: true,
      metadata: null,
    });
    expect(ruby.status, JSON.stringify(ruby.body)).toBe(200);
    expect(ruby.body.transaction.gateway_configuration_id).toBe(configuration);
    const node = await raw("POST", `/invoices/${await invoiceId()}/payout`, { source });
    expect(node.status).toBe(200);

    const forcedAlone = await raw("POST", `/invoices/${await invoiceId()}/payout`, {
      gateway_configuration_id: null,
      source,
      force_gateway_configuration_id: true,
      metadata: null,
    });
    expect(forcedAlone.status).toBe(400);
    expect(forcedAlone.body.invalid_fields[0].name).toBe("gateway_configuration_id");
    const noSource = await raw("POST", `/invoices/${await invoiceId()}/payout`, {
      gateway_configuration_id: null,
      source: null,
      force_gateway_configuration_id: null,
    });
    expect(noSource.status).toBe(400);
    expect(noSource.body.invalid_fields).toEqual([{ name: "source", message: "is required" }]);
  });
});
