import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { dynamo } from "../../shared/db/client.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Idempotency test");
const client = local.sandbox;

afterEach(() => {
  vi.restoreAllMocks();
});

const totalCount = async (c: Client = client) =>
  (await c.get("/customers?limit=1")).body.total_count as number;
const key = () => `key-${crypto.randomUUID()}`;

describe("Idempotency-Key on POST", () => {
  it("creates one customer for the same request sent twice, and replays the first answer", async () => {
    const before = await totalCount();
    const idempotencyKey = key();
    const first = await client.post("/customers", { first_name: "Once" }, { idempotencyKey });
    const replay = await client.post("/customers", { first_name: "Once" }, { idempotencyKey });
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await totalCount()).toBe(before + 1);
  });

  it("refuses the same key with other parameters", async () => {
    const idempotencyKey = key();
    await client.post("/customers", { first_name: "A" }, { idempotencyKey });
    const { status, body } = await client.post("/customers", { first_name: "B" }, { idempotencyKey });
    expect(status).toBe(400);
    expect(body.error_type).toBe("request.idempotency-key.invalid");
  });

  it("lets exactly one of many concurrent duplicates run; the others get a 409 or the same answer", async () => {
    const before = await totalCount();
    const idempotencyKey = key();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => client.post("/customers", { first_name: "Race" }, { idempotencyKey })),
    );
    const created = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 409);
    expect(created.length + refused.length).toBe(answers.length);
    expect(new Set(created.map((answer) => answer.body.customer.id)).size).toBe(1);
    for (const answer of refused) expect(answer.body.error_type).toBe("request.idempotency-key.concurrent");
    expect(await totalCount()).toBe(before + 1);
  });

  it("treats an empty Idempotency-Key header as absent", async () => {
    const before = await totalCount();
    await client.post("/customers", { first_name: "E" }, { idempotencyKey: "" });
    await client.post("/customers", { first_name: "E" }, { idempotencyKey: "" });
    expect(await totalCount()).toBe(before + 2);
  });

  it("keeps keys apart per environment", async () => {
    const live = api(local.url, local.project.live);
    const idempotencyKey = key();
    const a = await client.post("/customers", { first_name: "S" }, { idempotencyKey });
    const b = await live.post("/customers", { first_name: "S" }, { idempotencyKey });
    expect(a.body.customer.id).not.toBe(b.body.customer.id);
    expect(b.body.customer.sandbox).toBe(false);
  });

  it("replays a refusal: the same invalid request gets the same 400", async () => {
    const idempotencyKey = key();
    const first = await client.post("/customers", { currency: "XYZ" }, { idempotencyKey });
    const again = await client.post("/customers", { currency: "XYZ" }, { idempotencyKey });
    expect(first.status).toBe(400);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("answers a fault with a 500 that carries only a request id, writes nothing, and lets the retry run", async () => {
    const before = await totalCount();
    const send = dynamo.send.bind(dynamo);
    vi.spyOn(dynamo, "send").mockImplementation(((command: unknown) => {
      if (command instanceof TransactWriteCommand)
        throw new Error("injected: connection reset (secret detail)");
      return send(command as never);
    }) as typeof dynamo.send);
    const idempotencyKey = key();
    const failed = await client.post("/customers", { first_name: "Retry" }, { idempotencyKey });
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({
      success: false,
      error_type: "internal",
      message: expect.stringContaining(failed.body.request_id),
      request_id: expect.any(String),
    });
    expect(JSON.stringify(failed.body)).not.toContain("secret detail");
    expect(await totalCount()).toBe(before);

    vi.restoreAllMocks();
    const retried = await client.post("/customers", { first_name: "Retry" }, { idempotencyKey });
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(await totalCount()).toBe(before + 1);
  });
});

describe("Idempotency-Key and work under way", () => {
  it("does not store a 409 for an operation in progress: the same key's retry runs once it is over", async () => {
    const card = (
      await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc2: "123" })
    ).body.card.id;
    const invoice = (await client.post("/invoices", { name: "Order", amount: "10.00", currency: "USD" })).body
      .invoice.id;
    // The authorization is held at the provider until the capture has been refused once.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = sandboxConnector.card.authorize.bind(sandboxConnector.card);
    vi.spyOn(sandboxConnector.card, "authorize").mockImplementationOnce(async (request) => {
      await held;
      return real(request);
    });
    const authorizing = client.post(`/invoices/${invoice}/authorize`, { source: card });
    // Once the authorization is reserved, a capture finds the transaction busy.
    while ((await client.get(`/invoices/${invoice}/transactions`)).body.transaction === null);
    const idempotencyKey = key();
    const busy = await client.post(`/invoices/${invoice}/capture`, {}, { idempotencyKey });
    expect(busy.status).toBe(409);
    expect(busy.body.error_type).toBe("request.transaction.operation-in-progress");
    release();
    expect((await authorizing).status).toBe(200);
    const captured = await client.post(`/invoices/${invoice}/capture`, {}, { idempotencyKey });
    expect(captured.status).toBe(200);
    expect(captured.body.transaction.status).toBe("completed");
  });
});

describe("Idempotency-Key scoped by credential kind", () => {
  /** The browser and mobile libraries' credential: the project id alone (the public key). */
  const browser = () => api(local.url, { project_id: local.project.sandbox.project_id, private_key: "" });
  const card = { number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc2: "123" };

  async function invoice(): Promise<string> {
    const { status, body } = await client.post("/invoices", {
      name: "Order",
      amount: "10.00",
      currency: "USD",
    });
    expect(status).toBe(200);
    return body.invoice.id;
  }

  it("lets nothing sent with the public key block the merchant's request with the same key", async () => {
    const idempotencyKey = key();
    const invoiceId = await invoice();
    const tokenized = await browser().post("/cards", card, { idempotencyKey });
    expect(tokenized.status).toBe(200);

    const capture = await client.post(
      `/invoices/${invoiceId}/capture`,
      { source: tokenized.body.card.id },
      { idempotencyKey },
    );
    expect(capture.status).toBe(200);
    expect(capture.body.transaction.status).toBe("completed");
    expect(capture.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keeps a private-key request's key from answering a public-key request", async () => {
    const idempotencyKey = key();
    const first = await client.post("/cards", card, { idempotencyKey });
    const fromBrowser = await browser().post("/cards", card, { idempotencyKey });
    expect(fromBrowser.status).toBe(200);
    expect(fromBrowser.headers.get("idempotent-replayed")).toBeNull();
    expect(fromBrowser.body.card.id).not.toBe(first.body.card.id);
  });

  it("still replays within one kind: the browser's retry gets its first answer", async () => {
    const idempotencyKey = key();
    const first = await browser().post("/cards", card, { idempotencyKey });
    const retry = await browser().post("/cards", card, { idempotencyKey });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
  });

  it("counts the right private key sent to a route that allows the project id alone as the private key", async () => {
    const idempotencyKey = key();
    expect((await client.post("/cards", card, { idempotencyKey })).status).toBe(200);
    const other = await client.post("/customers", { first_name: "Same scope" }, { idempotencyKey });
    expect(other.status).toBe(400);
    expect(other.body.error_type).toBe("request.idempotency-key.invalid");
  });
});
