import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { config } from "../../shared/config.ts";
import { MAX_TOKENS_PER_CUSTOMER } from "../../shared/customers/customer.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { newId } from "../../shared/ids.ts";
import { type Client, useInProcessApi } from "../e2e/harness.ts";
import { recordedEvents } from "../support/events.ts";

const local = useInProcessApi("Tokens test");
const { sandbox, live } = local;
const scope = () => local.project.sandbox.project_id;

afterEach(() => {
  vi.restoreAllMocks();
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function newCard(client: Client, number = "4242424242424242", cvc: string | null = "123") {
  const { status, body } = await client.post("/cards", {
    number,
    exp_month: 12,
    exp_year: 2030,
    ...(cvc === null ? {} : { cvc2: cvc }),
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.card;
}

async function newCustomer(client: Client = sandbox) {
  return (await client.post("/customers", { first_name: "Ada" })).body.customer;
}

async function storedItem(key: { pk: string; sk: string }) {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }),
  );
  return Item;
}

/** The events of the sandbox environment about a customer's tokens, oldest first. */
async function tokenEvents(customerId: string) {
  return (await recordedEvents(scope())).filter(
    (event) => (event.data as { token?: { customer_id?: string } }).token?.customer_id === customerId,
  );
}

describe("POST /customers/{id}/tokens with a source", () => {
  it("creates a chargeable token, the customer's first and so its default, and records its event", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const { status, body } = await sandbox.post(`/customers/${customer.id}/tokens`, {
      source: card.id,
      description: "Main card",
      metadata: { k: "v" },
      // Keys client libraries send as null are absent.
      settings: null,
      verify_metadata: null,
      summary: null,
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      token: {
        id: expect.stringMatching(/^tok_[0-9A-Z]{26}$/),
        customer_id: customer.id,
        gateway_configuration_id: null,
        card,
        card_id: card.id,
        type: "card",
        metadata: { k: "v" },
        is_default: true,
        is_chargeable: true,
        verification_status: "not-requested",
        return_url: null,
        cancel_url: null,
        webhook_url: null,
        description: "Main card",
        created_at: expect.stringMatching(ISO_MS),
      },
      customer_action: {},
    });
    expect((await sandbox.get(`/customers/${customer.id}`)).body.customer.default_token_id).toBe(
      body.token.id,
    );
    const events = await tokenEvents(customer.id);
    expect(events).toEqual([
      expect.objectContaining({
        type: "event",
        id: expect.stringMatching(/^ev_/),
        name: "customer.token.created",
        sandbox: true,
        project_id: scope(),
        fired_at: expect.stringMatching(ISO_MS),
        data: { token: body.token },
      }),
    ]);
  });

  it("keeps the first token the default unless set_default asks otherwise", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const first = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    const second = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    expect(second.is_default).toBe(false);
    const third = (
      await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id, set_default: "true" })
    ).body.token;
    expect(third.is_default).toBe(true);
    const listed = (await sandbox.get(`/customers/${customer.id}/tokens`)).body.tokens;
    expect(listed.map((token: { id: string; is_default: boolean }) => [token.id, token.is_default])).toEqual([
      [third.id, true],
      [second.id, false],
      [first.id, false],
    ]);
  });

  it("makes exactly one of concurrent first tokens the default", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const defaults = answers.filter((answer) => answer.body.token.is_default);
    expect(defaults).toHaveLength(1);
    const stored = (await sandbox.get(`/customers/${customer.id}`)).body.customer;
    expect(stored.default_token_id).toBe(defaults[0]?.body.token.id);
  });

  it("refuses a card of the other environment, an anonymized card and a missing customer with 404", async () => {
    const sandboxCard = await newCard(sandbox);
    const liveCustomer = await newCustomer(live);
    const crossed = await live.post(`/customers/${liveCustomer.id}/tokens`, { source: sandboxCard.id });
    expect(crossed.status).toBe(404);
    expect(crossed.body.error_type).toBe("resource.card.not-found");

    const customer = await newCustomer();
    const deleted = await newCard(sandbox);
    await sandbox.del(`/cards/${deleted.id}`);
    const anonymized = await sandbox.post(`/customers/${customer.id}/tokens`, { source: deleted.id });
    expect(anonymized.body.error_type).toBe("resource.card.not-found");
    expect(
      (await sandbox.post(`/customers/${customer.id}/tokens`, { source: "tok_not_a_card" })).body.error_type,
    ).toBe("resource.card.not-found");

    const missing = await sandbox.post(`/customers/${newId("customer")}/tokens`, { source: sandboxCard.id });
    expect(missing.status).toBe(404);
    expect(missing.body.error_type).toBe("resource.customer.not-found");
    expect(await tokenEvents(customer.id)).toEqual([]);
  });

  it("shows a token whose card was deleted since as not chargeable", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    await sandbox.del(`/cards/${card.id}`);
    const { body } = await sandbox.get(`/customers/${customer.id}/tokens/${token.id}`);
    expect(body.token).toMatchObject({
      card_id: card.id,
      is_chargeable: false,
      card: { name: null, last_4_digits: "4242" },
    });
  });

  it("replays an idempotent retry: one token, one event", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const idempotencyKey = `tok-${customer.id}`;
    const first = await sandbox.post(
      `/customers/${customer.id}/tokens`,
      { source: card.id },
      { idempotencyKey },
    );
    const again = await sandbox.post(
      `/customers/${customer.id}/tokens`,
      { source: card.id },
      { idempotencyKey },
    );
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await sandbox.get(`/customers/${customer.id}/tokens`)).body.total_count).toBe(1);
    expect(await tokenEvents(customer.id)).toHaveLength(1);
  });

  it(`refuses a customer's token beyond the ${MAX_TOKENS_PER_CUSTOMER}th with a 409`, async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    for (let i = 0; i < MAX_TOKENS_PER_CUSTOMER; i++) {
      expect((await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).status).toBe(200);
    }
    const refused = await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id });
    expect(refused.status).toBe(409);
    expect(refused.body.error_type).toBe("request.customer.too-many-tokens");
    expect((await sandbox.get(`/customers/${customer.id}/tokens?limit=1`)).body.total_count).toBe(
      MAX_TOKENS_PER_CUSTOMER,
    );
  });
});

describe("verification", () => {
  it("creates a pending token with verify=true and no source, then verifies the card PUT on it", async () => {
    const customer = await newCustomer();
    const pending = await sandbox.post(`/customers/${customer.id}/tokens`, { verify: true });
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({
      token: {
        verification_status: "pending",
        is_chargeable: false,
        card: null,
        card_id: null,
        is_default: true,
      },
      customer_action: {},
    });
    const card = await newCard(sandbox);
    const { status, body } = await sandbox.put(`/customers/${customer.id}/tokens/${pending.body.token.id}`, {
      source: card.id,
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      token: {
        ...pending.body.token,
        verification_status: "success",
        is_chargeable: true,
        card_id: card.id,
        card: { ...card, cvc_check: "passed" },
        gateway_configuration_id: expect.stringMatching(/^gway_conf_/),
      },
      customer_action: {},
    });
    // The CVC was used once: it is gone from the card.
    const item = await storedItem(keys.resource(scope(), card.id));
    expect(item).not.toHaveProperty("cvc_sealed");
    expect(item).toHaveProperty("number_sealed");
  });

  it("marks a token failed when its card is declined, answering the decline, and lets another card succeed", async () => {
    const customer = await newCustomer();
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { verify: "true" })).body.token;
    const declining = await newCard(sandbox, "4000000000000002");
    const refused = await sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, {
      source: declining.id,
    });
    expect(refused.status).toBe(410);
    expect(refused.body).toMatchObject({ success: false, error_type: "card.declined" });
    const failed = (await sandbox.get(`/customers/${customer.id}/tokens/${token.id}`)).body.token;
    expect(failed).toMatchObject({
      verification_status: "failed",
      is_chargeable: false,
      card_id: declining.id,
    });

    const good = await newCard(sandbox);
    const retried = await sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, { source: good.id });
    expect(retried.status).toBe(200);
    expect(retried.body.token).toMatchObject({
      verification_status: "success",
      card_id: good.id,
      is_chargeable: true,
    });
  });

  it.each([
    ["4000000000002180", "card.do-not-honor"],
    ["4000000000002206", "card.no-money"],
    ["4000000000000028", "card.failed-cvc"],
  ])("answers %s's decline (%s) on PUT", async (number, errorType) => {
    const customer = await newCustomer();
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { verify: true })).body.token;
    const card = await newCard(sandbox, number);
    const { status, body } = await sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, {
      source: card.id,
    });
    expect(status).toBe(410);
    expect(body.error_type).toBe(errorType);
  });

  it("verifies at creation with verify=true and a source", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox, "4000000000000036");
    const { status, body } = await sandbox.post(`/customers/${customer.id}/tokens`, {
      source: card.id,
      verify: true,
    });
    expect(status).toBe(200);
    expect(body.token).toMatchObject({
      verification_status: "success",
      is_chargeable: true,
      card: { cvc_check: "passed", avs_check: "failed" },
    });
    expect((await sandbox.get(`/cards/${card.id}`)).body.card).toMatchObject({
      cvc_check: "passed",
      avs_check: "failed",
    });
  });

  it("fails the creation with verify=true and a declining card, and stores no token and no event", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox, "4000000000000028");
    const { status, body } = await sandbox.post(`/customers/${customer.id}/tokens`, {
      source: card.id,
      verify: true,
    });
    expect(status).toBe(410);
    expect(body).toMatchObject({ success: false, error_type: "card.failed-cvc" });
    expect((await sandbox.get(`/customers/${customer.id}/tokens`)).body).toMatchObject({
      tokens: [],
      total_count: 0,
    });
    expect((await sandbox.get(`/customers/${customer.id}`)).body.customer.default_token_id).toBeNull();
    expect(await tokenEvents(customer.id)).toEqual([]);
    // The CVC was sent to the issuer once: it is dropped all the same, and the result kept.
    expect((await sandbox.get(`/cards/${card.id}`)).body.card.cvc_check).toBe("failed");
    expect(await storedItem(keys.resource(scope(), card.id))).not.toHaveProperty("cvc_sealed");
  });

  it("verifies a pending token once when PUTs race: one succeeds, the others are refused", async () => {
    const customer = await newCustomer();
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { verify: true })).body.token;
    const card = await newCard(sandbox);
    const verifications = vi.spyOn(sandboxConnector.card, "verifyCard");
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, { source: card.id }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const answer of answers.filter((candidate) => candidate.status === 409)) {
      expect(answer.body.error_type).toMatch(
        /^request\.token\.(verification-in-progress|source-already-set)$/,
      );
    }
    expect(verifications).toHaveBeenCalledTimes(1);
  });

  it("refuses to attach a card to a token that has one", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    const { status, body } = await sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, {
      source: card.id,
    });
    expect(status).toBe(409);
    expect(body.error_type).toBe("request.token.source-already-set");
  });
});

describe("GET, PUT and DELETE /customers/{id}/tokens/{token_id}", () => {
  it("lists a customer's tokens with the listing envelope and rules", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token.id);
    }
    const all = (await sandbox.get(`/customers/${customer.id}/tokens`)).body;
    expect(all).toMatchObject({
      success: true,
      count: 3,
      total_count: 3,
      has_more: false,
      limit: 10,
      order: "desc",
    });
    expect(all.tokens.map((token: { id: string }) => token.id)).toEqual([...ids].reverse());
    const page = (
      await sandbox.get(`/customers/${customer.id}/tokens?limit=1&order=asc&start_after=${ids[0]}`)
    ).body;
    expect(page).toMatchObject({ count: 1, has_more: true, total_count: 3 });
    expect(page.tokens[0].id).toBe(ids[1]);
    expect((await sandbox.get(`/customers/${newId("customer")}/tokens`)).status).toBe(404);
  });

  it("changes a token's fields and makes it the default on request", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id });
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    const { status, body } = await sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, {
      description: "Backup",
      metadata: { a: "b" },
      return_url: "https://shop.example.com/back",
      set_default: true,
    });
    expect(status).toBe(200);
    expect(body.token).toEqual({
      ...token,
      description: "Backup",
      metadata: { a: "b" },
      return_url: "https://shop.example.com/back",
      is_default: true,
    });
    expect(body.customer_action).toEqual({});
    const invalid = await sandbox.put(`/customers/${customer.id}/tokens/${token.id}`, {
      webhook_url: "nope",
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.invalid_fields).toEqual([expect.objectContaining({ name: "webhook_url" })]);
  });

  it("answers a token of another customer or environment with 404", async () => {
    const customer = await newCustomer();
    const other = await newCustomer();
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { verify: true })).body.token;
    for (const [client, path] of [
      [sandbox, `/customers/${other.id}/tokens/${token.id}`],
      [live, `/customers/${customer.id}/tokens/${token.id}`],
    ] as const) {
      expect((await client.get(path)).status).toBe(404);
      expect((await client.put(path, { description: "x" })).status).toBe(404);
      expect((await client.del(path)).status).toBe(404);
    }
    const missing = await sandbox.get(`/customers/${customer.id}/tokens/${newId("token")}`);
    expect(missing.body.error_type).toBe("resource.token.not-found");
  });

  it("deletes a token once, records its event, and clears the default it was", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const first = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    const second = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;

    const deleted = await sandbox.del(`/customers/${customer.id}/tokens/${second.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await sandbox.get(`/customers/${customer.id}`)).body.customer.default_token_id).toBe(first.id);

    expect((await sandbox.del(`/customers/${customer.id}/tokens/${first.id}`)).status).toBe(200);
    expect((await sandbox.get(`/customers/${customer.id}`)).body.customer.default_token_id).toBeNull();
    expect((await sandbox.del(`/customers/${customer.id}/tokens/${first.id}`)).status).toBe(404);
    expect((await sandbox.get(`/customers/${customer.id}/tokens`)).body.total_count).toBe(0);

    const names = (await tokenEvents(customer.id)).map((event) => [
      event.name,
      (event.data as { token: { id: string } }).token.id,
    ]);
    expect(names.sort()).toEqual(
      [
        ["customer.token.created", first.id],
        ["customer.token.created", second.id],
        ["customer.token.deleted", first.id],
        ["customer.token.deleted", second.id],
      ].sort(),
    );
    // A new first token becomes the default again.
    const third = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    expect(third.is_default).toBe(true);
  });

  it("shows a customer's tokens presented, when expanded", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const token = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token;
    const { body } = await sandbox.get(`/customers/${customer.id}?expand[]=tokens`);
    expect(body.customer).toMatchObject({ default_token_id: token.id, tokens: [token] });
  });
});

describe("deleting a customer", () => {
  it("deletes its tokens in the same transaction, with their events", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const tokens = [];
    for (let i = 0; i < 3; i++) {
      tokens.push((await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token);
    }
    expect((await sandbox.del(`/customers/${customer.id}`)).status).toBe(200);
    for (const token of tokens) {
      expect(await storedItem(keys.child(scope(), customer.id, "token", token.id))).toBeUndefined();
    }
    expect((await sandbox.get(`/customers/${customer.id}/tokens`)).status).toBe(404);
    const deletedEvents = (await tokenEvents(customer.id)).filter(
      (event) => event.name === "customer.token.deleted",
    );
    expect(deletedEvents).toHaveLength(3);
    // The card is the merchant's, not the customer's: it stays.
    expect((await sandbox.get(`/cards/${card.id}`)).status).toBe(200);
  });
});

describe("events", () => {
  it("are recorded if and only if the change committed", async () => {
    const customer = await newCustomer();
    const card = await newCard(sandbox);
    const send = dynamo.send.bind(dynamo);
    // The transaction that would store the token fails once, as a crash or a throttle would.
    let faults = 1;
    vi.spyOn(dynamo, "send").mockImplementation(async (command) => {
      if (command instanceof TransactWriteCommand && faults-- > 0) throw new Error("injected fault");
      return send(command as never);
    });
    const failed = await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id });
    expect(failed.status).toBe(500);
    expect((await sandbox.get(`/customers/${customer.id}/tokens`)).body.total_count).toBe(0);
    expect(await tokenEvents(customer.id)).toEqual([]);

    const retried = await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id });
    expect(retried.status).toBe(200);
    expect((await tokenEvents(customer.id)).map((event) => event.name)).toEqual(["customer.token.created"]);
  });
});
