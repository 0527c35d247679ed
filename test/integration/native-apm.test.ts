import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { SANDBOX_APM_SUCCESS_EMAIL } from "../../shared/gateways/sandbox/native-apm.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { killedAtTransaction } from "../support/crash.ts";
import { eventNamesOfTransaction } from "../support/events.ts";

/** The spec's native APM flow through the sandbox APM (issue 10). */
const local = useInProcessApi("Native APM test");
const client = local.sandbox;
const scope = () => local.project.sandbox.project_id;

afterEach(() => {
  vi.restoreAllMocks();
});

async function apmConfiguration(environment = client) {
  const { body } = await environment.get("/gateway-configurations?filter=native-alternative-payment-methods");
  return body.gateway_configurations[0] as { id: string; gateway_name: string };
}

async function paymentId(environment = client): Promise<string> {
  const configuration = await apmConfiguration(environment);
  return `${configuration.id}.${configuration.gateway_name}`;
}

async function invoice(fields: Record<string, unknown> = {}): Promise<string> {
  const { body } = await client.post("/invoices", {
    name: "Order",
    amount: "25.00",
    currency: "EUR",
    metadata: { skip_processoutjs: "true" },
    ...fields,
  });
  return body.invoice.id;
}

const pay = (
  invoiceId: string,
  gatewayConfigurationId: string,
  values: Record<string, unknown>,
  key?: string,
) =>
  client.post(
    `/invoices/${invoiceId}/native-payment`,
    { gateway_configuration_id: gatewayConfigurationId, native_apm: { parameter_values: values } },
    key ? { idempotencyKey: key } : {},
  );

/** An invoice brought to PENDING_CAPTURE. */
async function pendingCapture(): Promise<{ invoiceId: string; id: string }> {
  const [invoiceId, id] = [await invoice(), await paymentId()];
  expect((await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL })).body.native_apm.state).toBe(
    "CUSTOMER_INPUT",
  );
  expect((await pay(invoiceId, id, { token: "123456" })).body.native_apm.state).toBe("PENDING_CAPTURE");
  return { invoiceId, id };
}

describe("the native APM flow", () => {
  it("goes CUSTOMER_INPUT → PENDING_CAPTURE → captured, with the spec's answers and events", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    const details = await client.get(`/invoices/${invoiceId}/native-payment/${id}`);
    expect(details.body.native_apm).toMatchObject({
      state: null,
      invoice: { amount: "25.00", currency_code: "EUR" },
      parameters: [{ key: "email", type: "email", length: null, required: true }],
    });

    const first = await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    expect(first.status).toBe(200);
    const asked = [
      { key: "token", type: "numeric", length: 6, required: true },
      { key: "name", type: "string", length: null, required: false },
    ];
    expect(first.body).toMatchObject({
      success: true,
      native_apm: {
        state: "CUSTOMER_INPUT",
        parameters: asked,
        parameterDefinitions: asked,
        parameterValues: { message: expect.any(String) },
      },
      transaction: { status: "waiting", card_id: null, payment_method: "native-apm" },
    });
    expect(first.body.transaction.native_apm_response).toEqual(first.body.native_apm);
    // Where the flow stands: what is still to collect.
    expect((await client.get(`/invoices/${invoiceId}/native-payment/${id}`)).body.native_apm).toMatchObject({
      state: "CUSTOMER_INPUT",
      parameters: asked,
    });

    const second = await pay(invoiceId, id, { token: "123456", name: "Ada" });
    expect(second.status).toBe(200);
    expect(second.body.native_apm).toEqual({
      state: "PENDING_CAPTURE",
      parameters: null,
      parameterDefinitions: null,
      parameterValues: { message: expect.any(String) },
    });
    const transaction = second.body.transaction;
    expect(transaction).toMatchObject({
      status: "pending",
      gateway_configuration_id: id.split(".")[0],
      native_apm: { state: "PENDING_CAPTURE" },
    });
    expect(await eventNamesOfTransaction(scope(), transaction.id)).toEqual(["invoice.pending"]);

    const captured = await client.post(`/invoices/${invoiceId}/capture`, { source: id });
    expect(captured.status).toBe(200);
    expect(captured.body.transaction).toMatchObject({ status: "completed", captured_amount: "25.00" });
    expect(await eventNamesOfTransaction(scope(), transaction.id)).toEqual([
      "invoice.completed",
      "invoice.pending",
      "transaction.captured",
    ]);
    expect((await client.get(`/invoices/${invoiceId}`)).body.invoice.transaction_id).toBe(transaction.id);
  });

  it("refunds a captured native payment through the refund routes", async () => {
    const { invoiceId, id } = await pendingCapture();
    await client.post(`/invoices/${invoiceId}/capture`, { source: id });
    const refunded = await client.post(`/invoices/${invoiceId}/refunds`, { amount: "5.00" });
    expect(refunded.status).toBe(200);
    expect(refunded.body.transaction).toMatchObject({ refunded_amount: "5.00", status: "completed" });
  });
});

describe("native APM failures", () => {
  it("refuses another email as the sandbox's failure, then succeeds with the right one", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    const refused = await pay(invoiceId, id, { email: "someone@example.com" });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, error_type: "gateway.declined" });
    const tx = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(tx).toMatchObject({ status: "waiting", native_apm: null });
    expect(tx.operations.at(-1)).toMatchObject({ success: false, error_code: "gateway.declined" });
    expect((await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL })).body.native_apm.state).toBe(
      "CUSTOMER_INPUT",
    );
  });

  it("refuses the wrong token as the sandbox's failure, and the right one then works", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    const wrong = await pay(invoiceId, id, { token: "000000" });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error_type).toBe("gateway.declined");
    expect((await pay(invoiceId, id, { token: "654321" })).body.native_apm.state).toBe("PENDING_CAPTURE");
  });

  it("names every bad parameter: missing, unexpected, wrong type and wrong length, and calls nobody", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    const pays = vi.spyOn(sandboxConnector.nativeApm, "pay");
    const missing = await pay(invoiceId, id, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      error_type: "request.validation.missing-email",
      invalid_fields: [{ name: "email", message: "is required" }],
    });
    const badEmail = await pay(invoiceId, id, { email: "not an email", coupon: "X" });
    expect(badEmail.body.invalid_fields).toEqual([
      { name: "coupon", message: expect.stringContaining("not asked") },
      { name: "email", message: "must be a valid email address" },
    ]);
    expect(pays).not.toHaveBeenCalled();

    await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    const cases: Array<[Record<string, unknown>, { name: string; message: string }[]]> = [
      [{}, [{ name: "token", message: "is required" }]],
      [{ name: "Ada" }, [{ name: "token", message: "is required" }]],
      [{ token: "12345" }, [{ name: "token", message: "must be exactly 6 characters long" }]],
      [{ token: "12a456" }, [{ name: "token", message: "must hold digits only" }]],
      [{ token: true }, [{ name: "token", message: "must be a string" }]],
      [
        { token: "123456", email: SANDBOX_APM_SUCCESS_EMAIL },
        [{ name: "email", message: expect.any(String) }],
      ],
    ];
    for (const [values, fields] of cases) {
      const answer = await pay(invoiceId, id, values);
      expect(answer.status, JSON.stringify(values)).toBe(400);
      expect(answer.body.invalid_fields, JSON.stringify(values)).toEqual(fields);
    }
    expect(pays).toHaveBeenCalledTimes(1);
    expect((await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction.native_apm.state).toBe(
      "CUSTOMER_INPUT",
    );
  });

  it("refuses a capture before PENDING_CAPTURE, and a capture with nothing to capture", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    expect((await client.post(`/invoices/${invoiceId}/capture`, { source: id })).body.error_type).toBe(
      "request.invoice.not-authorized",
    );
    await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    const early = await client.post(`/invoices/${invoiceId}/capture`, { source: id });
    expect(early.status).toBe(409);
    expect(early.body.error_type).toBe("request.transaction.invalid-state");
    expect(early.body.message).toContain("PENDING_CAPTURE");
  });

  it("answers 404 for a configuration of another environment or project, and for a card one named as APM", async () => {
    const invoiceId = await invoice();
    const other = await createProject("Another APM project");
    for (const foreign of [await paymentId(local.live), await paymentId(api(local.url, other.sandbox))]) {
      const answer = await pay(invoiceId, foreign, { email: SANDBOX_APM_SUCCESS_EMAIL });
      expect(answer.status).toBe(404);
      expect(answer.body.error_type).toBe("resource.gateway-configuration.not-found");
      expect((await client.get(`/invoices/${invoiceId}/native-payment/${foreign}`)).status).toBe(404);
    }
    const cards = (await client.get("/gateway-configurations?filter=card-payments")).body
      .gateway_configurations[0];
    const wrongMethod = await pay(invoiceId, `${cards.id}.sandbox`, { email: SANDBOX_APM_SUCCESS_EMAIL });
    expect(wrongMethod.status).toBe(400);
    expect(wrongMethod.body.invalid_fields).toEqual([
      { name: "gateway_configuration_id", message: expect.any(String) },
    ]);
  });

  it("refuses to pay with a disabled configuration", async () => {
    const made = await client.post("/gateways/sandbox/gateway-configurations", {
      payment_method: "native-apm",
      enabled: false,
    });
    const id = `${made.body.gateway_configuration.id}.sandbox`;
    const answer = await pay(await invoice(), id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    expect(answer.status).toBe(400);
    expect(answer.body.error_type).toBe("request.gateway-configuration.disabled");
  });

  it("still serves, once deleted, the payments made through it: their step, details, capture and refund", async () => {
    const made = await client.post("/gateways/sandbox/gateway-configurations", {
      payment_method: "native-apm",
      name: "APM to delete",
    });
    const id = `${made.body.gateway_configuration.id}.sandbox`;
    const [confirmed, halfway, fresh] = [await invoice(), await invoice(), await invoice()];
    await pay(confirmed, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    expect((await pay(confirmed, id, { token: "123456" })).body.native_apm.state).toBe("PENDING_CAPTURE");
    expect((await pay(halfway, id, { email: SANDBOX_APM_SUCCESS_EMAIL })).body.native_apm.state).toBe(
      "CUSTOMER_INPUT",
    );

    expect((await client.del(`/gateway-configurations/${made.body.gateway_configuration.id}`)).status).toBe(
      200,
    );

    const details = await client.get(`/invoices/${confirmed}/native-payment/${id}`);
    expect(details.status, JSON.stringify(details.body)).toBe(200);
    expect(details.body.native_apm.state).toBe("PENDING_CAPTURE");
    const captured = await client.post(`/invoices/${confirmed}/capture`, { source: id });
    expect(captured.status, JSON.stringify(captured.body)).toBe(200);
    expect(captured.body.transaction).toMatchObject({ status: "completed", captured_amount: "25.00" });
    const refunded = await client.post(`/invoices/${confirmed}/refunds`, { amount: "5.00" });
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    // A payment begun before the deletion goes on through it.
    expect((await pay(halfway, id, { token: "123456" })).body.native_apm.state).toBe("PENDING_CAPTURE");

    // A new payment through it is refused, as if it never existed; so are its details.
    const refused = await pay(fresh, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    expect(refused.status).toBe(404);
    expect(refused.body.error_type).toBe("resource.gateway-configuration.not-found");
    expect((await client.get(`/invoices/${fresh}/native-payment/${id}`)).status).toBe(404);
    expect((await client.post(`/invoices/${fresh}/capture`, { source: id })).status).toBe(404);
  });

  it("refuses a card payment on an invoice paid natively, and the other way round", async () => {
    const { invoiceId } = await pendingCapture();
    const card = await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
    const answer = await client.post(`/invoices/${invoiceId}/authorize`, { source: card.body.card.id });
    expect(answer.status).toBe(409);
    expect(answer.body.error_type).toBe("request.invoice.payment-attempted");
  });
});

describe("native APM money rules", () => {
  it("moves the flow once under concurrent native payments and concurrent captures", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    const pays = vi.spyOn(sandboxConnector.nativeApm, "pay");
    const first = await Promise.all(
      Array.from({ length: 8 }, () => pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL })),
    );
    // One moves the flow; the others found it in flight (409) or already past that step (400).
    expect(first.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of first.filter((candidate) => candidate.status !== 200)) {
      expect([400, 409]).toContain(answer.status);
    }
    expect(pays).toHaveBeenCalledTimes(1);
    const transactionId = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction.id;

    await pay(invoiceId, id, { token: "123456" });
    const captures = vi.spyOn(sandboxConnector, "capture");
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => client.post(`/invoices/${invoiceId}/capture`, { source: id })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(captures).toHaveBeenCalledTimes(1);
    const events = await eventNamesOfTransaction(scope(), transactionId);
    expect(events.filter((name) => name === "transaction.captured")).toHaveLength(1);
  });

  it("replays a native payment with the same Idempotency-Key without a second provider call", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    const pays = vi.spyOn(sandboxConnector.nativeApm, "pay");
    const key = `native-${crypto.randomUUID()}`;
    const first = await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL }, key);
    const replay = await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL }, key);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(pays).toHaveBeenCalledTimes(1);
    const captureKey = `capture-${crypto.randomUUID()}`;
    await pay(invoiceId, id, { token: "123456" });
    const capture = await client.post(
      `/invoices/${invoiceId}/capture`,
      { source: id },
      { idempotencyKey: captureKey },
    );
    const again = await client.post(
      `/invoices/${invoiceId}/capture`,
      { source: id },
      { idempotencyKey: captureKey },
    );
    expect(again.body).toEqual(capture.body);
  });

  it("settles a step cut by a crash from what the provider recorded (recovery job)", async () => {
    const [invoiceId, id] = [await invoice(), await paymentId()];
    await pay(invoiceId, id, { email: SANDBOX_APM_SUCCESS_EMAIL });
    // The reservation, then the settlement: the settlement is lost.
    const restore = killedAtTransaction(2);
    expect((await pay(invoiceId, id, { token: "123456" })).status).toBe(500);
    restore();
    const held = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(held.status).toBe("waiting");
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
    expect(await recoverReservations({ onlyScope: scope() })).toMatchObject({ settled: 1 });
    const settled = (await client.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
    expect(settled).toMatchObject({ status: "pending", native_apm: { state: "PENDING_CAPTURE" } });
    expect(await eventNamesOfTransaction(scope(), settled.id)).toEqual(["invoice.pending"]);
  });
});
