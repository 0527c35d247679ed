/**
 * Routing and cascading across gateway configurations (issue 20): rules, splits, blocks, pinned
 * payments, the cascade's rules, the circuit breaker, the card schemes' retry rules, and the money
 * rule that holds through all of it: at most one approved authorization per invoice.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { dynamo } from "../../shared/db/client.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { tableLedger } from "../../shared/gateways/sandbox/ledger.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { createProject } from "../../shared/projects/project.ts";
import { decide } from "../../shared/routing/decide.ts";
import { OPEN_MS } from "../../shared/routing/health.ts";
import { NO_RULES, type RoutingRules } from "../../shared/routing/rules.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Routing test");

afterEach(() => {
  vi.restoreAllMocks();
});

interface Attempt {
  reference: string;
  gateway_configuration_id: string;
  outcome: string;
  error_code: string | null;
  decline: string | null;
  duration_ms: number | null;
  cascade: string | null;
}

/** A fresh sandbox environment (its own breakers and card history) with its card configuration's id. */
async function environment(name: string) {
  const client = api(local.url, (await createProject(name)).sandbox);
  const { body } = await client.get("/gateway-configurations");
  const sandbox = body.gateway_configurations.find(
    (item: { payment_method: string }) => item.payment_method === "card",
  );
  return { client, sandbox: sandbox.id as string };
}

async function configuration(client: Client, name: string, settings: Record<string, string> = {}) {
  const { status, body } = await client.post("/gateways/sandbox/gateway-configurations", { name, settings });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.gateway_configuration.id as string;
}

async function setRules(client: Client, rules: Record<string, unknown>) {
  const version = (await client.get("/routing-rules")).body.routing_rules.version;
  const { status, body } = await client.put("/routing-rules", { version, ...rules });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.routing_rules;
}

async function pay(
  client: Client,
  number: string,
  extra: Record<string, unknown> = {},
  invoice: Record<string, unknown> = {},
) {
  const card = (await client.post("/cards", { number, exp_month: 12, exp_year: 2099 })).body.card;
  return payWith(client, card.id, extra, invoice);
}

async function payWith(
  client: Client,
  cardId: string,
  extra: Record<string, unknown> = {},
  invoice: Record<string, unknown> = {},
) {
  const created = (
    await client.post("/invoices", { name: "Order", amount: "10.00", currency: "EUR", ...invoice })
  ).body.invoice;
  const answer = await client.post(`/invoices/${created.id}/authorize`, { source: cardId, ...extra });
  const transaction = (await client.get(`/invoices/${created.id}/transactions`)).body.transaction;
  return { status: answer.status, body: answer.body, invoiceId: created.id as string, transaction };
}

/** Every authorization the sandbox approved for the transaction's attempts: never more than one. */
async function approvalsAtProviders(scope: string, attempts: Attempt[]) {
  let approved = 0;
  for (const attempt of attempts) {
    const found = await sandboxConnector.lookup({
      scope,
      kind: "authorization",
      reference: attempt.reference,
      gatewayReference: null,
      providerState: null,
    });
    if (found.status === "found" && found.outcome.status === "approved") approved += 1;
  }
  return approved;
}

describe("routing rules", () => {
  it("are one versioned document: replaced for the version read, refused (409) for a stale one, each bad field named", async () => {
    const { client, sandbox } = await environment("Routing rules document");
    const empty = (await client.get("/routing-rules")).body.routing_rules;
    expect(empty).toEqual({ version: 0, default_order: [], rules: [], updated_at: null });
    const set = await setRules(client, {
      default_order: [sandbox],
      rules: [
        {
          name: "Big EUR",
          conditions: { currencies: ["EUR"], amount_min: "100" },
          action: { type: "route", gateway_configuration_ids: [sandbox] },
        },
      ],
    });
    expect(set).toMatchObject({ version: 1, default_order: [sandbox] });
    expect(set.rules[0]).toMatchObject({
      id: expect.stringMatching(/^rule_/),
      conditions: { currencies: ["EUR"], amount_min: "100" },
      action: {
        type: "route",
        gateway_configuration_ids: [sandbox],
        max_attempts: 3,
        require_three_d_s: false,
      },
    });
    const stale = await client.put("/routing-rules", { version: 0, rules: [] });
    expect(stale.status).toBe(409);
    expect(stale.body.error_type).toBe("request.routing-rules.version-conflict");
    const missing = await client.put("/routing-rules", { rules: [] });
    expect(missing.status).toBe(400);
    expect(missing.body.invalid_fields[0].name).toBe("version");
    const unknown = await client.put("/routing-rules", {
      version: 1,
      rules: [{ action: { type: "route", gateway_configuration_ids: [sandbox, "gway_conf_nope"] } }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.invalid_fields).toEqual([
      {
        name: "rules[0].action.gateway_configuration_ids[1]",
        message: expect.stringContaining("names no gateway configuration"),
      },
    ]);
    const badAction = await client.put("/routing-rules", {
      version: 1,
      rules: [{ action: { type: "teleport" } }],
    });
    expect(badAction.status).toBe(400);
    expect((await client.get("/routing-rules")).body.routing_rules.version).toBe(1);
  });

  it("route by the first matching rule, block with the rule's reason, pin, and explain each on the transaction", async () => {
    const { client, sandbox } = await environment("Routing decisions");
    const other = await configuration(client, "Acquirer B");
    await setRules(client, {
      rules: [
        {
          id: "no-usd",
          conditions: { currencies: ["USD"] },
          action: { type: "block", reason: "USD is not sold here" },
        },
        {
          id: "debit-to-b",
          conditions: { card_types: ["debit"] },
          action: { type: "route", gateway_configuration_ids: [other] },
        },
        {
          id: "de-cards",
          conditions: { card_countries: ["DE"], initiator: "customer" },
          action: { type: "route", gateway_configuration_ids: [other, sandbox] },
        },
        {
          id: "vip",
          conditions: { metadata: { tier: "vip" } },
          action: { type: "route", gateway_configuration_ids: [other] },
        },
      ],
    });
    const blocked = await pay(client, "4242424242424242", {}, { currency: "USD" });
    expect(blocked.status).toBe(402);
    expect(blocked.body).toMatchObject({
      error_type: "request.routing.blocked",
      message: expect.stringContaining("USD is not sold here"),
    });
    expect(blocked.transaction).toBeNull();

    const debit = await pay(client, "4000056655665556");
    expect(debit.status).toBe(200);
    expect(debit.transaction).toMatchObject({ status: "authorized", gateway_configuration_id: other });
    expect(debit.transaction.routing).toMatchObject({
      decided_by: "rule",
      rule: { id: "debit-to-b", position: 2 },
      facts: { card_scheme: "visa", card_type: "debit", card_country: "US" },
      chain: [other],
    });
    // The merchant's server initiates: the DE rule asks for the customer; the default order decides.
    const german = await pay(client, "4002760000000009");
    expect(german.transaction.routing).toMatchObject({ decided_by: "default", chain: [sandbox, other] });
    const vip = await pay(client, "4242424242424242", {}, { metadata: { tier: "vip" } });
    expect(vip.transaction.routing.rule.id).toBe("vip");

    const pinned = await pay(client, "4000056655665556", { gateway_configuration_id: `${sandbox}.sandbox` });
    expect(pinned.transaction).toMatchObject({
      gateway_configuration_id: sandbox,
      routing: { decided_by: "pinned", chain: [sandbox] },
    });
    const pinnedElsewhere = await pay(client, "4242424242424242", {
      gateway_configuration_id: "gway_conf_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    });
    expect(pinnedElsewhere.status).toBe(404);
  });

  it("simulate the same explanation without moving money", async () => {
    const { client, sandbox } = await environment("Routing simulation");
    const other = await configuration(client, "Acquirer B", {});
    await client.put(`/gateway-configurations/${other}`, { currencies: ["GBP"] });
    await setRules(client, {
      rules: [
        {
          id: "eur",
          conditions: { currencies: ["EUR"] },
          action: { type: "route", gateway_configuration_ids: [other, sandbox] },
        },
      ],
    });
    const { status, body } = await client.post("/routing-rules/simulate", {
      amount: "12.00",
      currency: "EUR",
      iin: "42424242",
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.routing).toMatchObject({
      decided_by: "rule",
      rule: { id: "eur" },
      chain: [sandbox],
      skipped: [{ gateway_configuration_id: other, reason: "currency-not-supported" }],
    });
    expect((await client.get("/invoices?limit=1")).body.total_count).toBe(0);
    const bad = await client.post("/routing-rules/simulate", {
      amount: "12.001",
      currency: "EUR",
      iin: "4242",
    });
    expect(bad.status).toBe(400);
  });

  it("split volume by weights: 70/30 within ±5 % over 1,000 payments, the same payment always drawing the same", () => {
    const configurations = ["gway_conf_A", "gway_conf_B"].map((id, i) => ({
      id,
      project_id: "test",
      gateway_name: "sandbox",
      payment_method: "card" as const,
      name: null,
      enabled: true,
      default_currency: null,
      currencies: null,
      settings: {},
      secrets: {},
      sandbox: true,
      created_at: new Date(i).toISOString(),
      deleted_at: null,
    }));
    const rules: RoutingRules = {
      ...NO_RULES,
      version: 1,
      rules: [
        {
          id: "split",
          name: null,
          conditions: {},
          action: {
            type: "split",
            splits: [
              { gateway_configuration_id: "gway_conf_A", weight: 70 },
              { gateway_configuration_id: "gway_conf_B", weight: 30 },
            ],
            max_attempts: 2,
            require_three_d_s: false,
          },
        },
      ],
    };
    let toA = 0;
    for (let i = 0; i < 1000; i++) {
      const facts = {
        transactionId: `tr_${i}_${Math.random()}`,
        amount: "10",
        currency: "EUR",
        card: { scheme: "visa", iin: "424242" },
        country: null,
        initiator: "customer" as const,
        metadata: {},
      };
      const first = decide(rules, configurations, new Map(), facts, { pinned: null, now: Date.now() });
      const again = decide(rules, configurations, new Map(), facts, { pinned: null, now: Date.now() });
      expect(again.chain).toEqual(first.chain);
      expect(first.chain).toHaveLength(2);
      if (first.chain[0] === "gway_conf_A") toA += 1;
    }
    expect(toA).toBeGreaterThanOrEqual(650);
    expect(toA).toBeLessThanOrEqual(750);
  });
});

describe("cascading", () => {
  it("moves a soft decline to the next configuration in the same request, and records every attempt", async () => {
    const { client, sandbox } = await environment("Cascade soft");
    const flaky = await configuration(client, "Declines 4242", { soft_decline_cards: "4242" });
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [flaky, sandbox] } }],
    });
    const paid = await pay(client, "4242424242424242");
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.transaction).toMatchObject({ status: "authorized", gateway_configuration_id: sandbox });
    const attempts = paid.transaction.attempts as Attempt[];
    expect(attempts).toMatchObject([
      {
        gateway_configuration_id: flaky,
        outcome: "declined",
        error_code: "card.do-not-honor",
        decline: "soft",
        cascade: `to ${sandbox}`,
      },
      { gateway_configuration_id: sandbox, outcome: "approved", error_code: null, cascade: null },
    ]);
    for (const attempt of attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    expect(paid.transaction.routing).toMatchObject({
      decided_by: "rule",
      rule: { id: "chain" },
      chain: [flaky, sandbox],
    });
    expect(await approvalsAtProviders(paid.transaction.project_id, attempts)).toBe(1);
  });

  it("never cascades after a hard decline, past the attempt limit, or on an unknown outcome", async () => {
    const { client, sandbox } = await environment("Cascade never");
    const third = await configuration(client, "Third");
    const lost = await configuration(client, "Loses answers", { unknown_outcome_cards: "4242" });
    await setRules(client, {
      rules: [
        {
          id: "chain",
          action: { type: "route", gateway_configuration_ids: [sandbox, third], max_attempts: 2 },
        },
      ],
    });
    const hard = await pay(client, "4000000000002214");
    expect(hard.status).toBe(410);
    expect(hard.body.error_type).toBe("card.expired");
    expect(hard.transaction.attempts).toMatchObject([
      { gateway_configuration_id: sandbox, decline: "hard", cascade: "hard decline" },
    ]);

    const flakyA = await configuration(client, "Soft A", { soft_decline_cards: "4242" });
    const flakyB = await configuration(client, "Soft B", { soft_decline_cards: "4242" });
    await setRules(client, {
      rules: [
        {
          id: "limited",
          action: { type: "route", gateway_configuration_ids: [flakyA, flakyB, sandbox], max_attempts: 2 },
        },
      ],
    });
    const limited = await pay(client, "4242424242424242");
    expect(limited.status).toBe(410);
    expect(limited.transaction.attempts.map((attempt: Attempt) => attempt.gateway_configuration_id)).toEqual([
      flakyA,
      flakyB,
    ]);
    expect(limited.transaction.attempts[1].cascade).toBe("attempt limit of 2 reached");

    await setRules(client, {
      rules: [{ id: "lost", action: { type: "route", gateway_configuration_ids: [lost, sandbox] } }],
    });
    const unknown = await pay(client, "4242424242424242");
    expect(unknown.status).toBe(504);
    expect(unknown.body.error_type).toBe("gateway.timeout");
    // Nothing went to the next configuration: the first may have approved (it did).
    expect(unknown.transaction).toMatchObject({
      status: "waiting",
      gateway_configuration_id: lost,
      attempts: [],
    });
    // Once the reservation's lease is over, the provider's record settles it.
    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
    const synced = await client.put(`/invoices/${unknown.invoiceId}/sync-with-psp`, {});
    vi.restoreAllMocks();
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    const after = (await client.get(`/invoices/${unknown.invoiceId}/transactions`)).body.transaction;
    expect(after).toMatchObject({ status: "authorized", gateway_configuration_id: lost });
    expect(after.attempts).toMatchObject([
      { gateway_configuration_id: lost, outcome: "approved", duration_ms: null },
    ]);
  });

  it("after 3DS with one provider, cascades only with retry_drop_liability_shift, asking the next for no authentication", async () => {
    const { client, sandbox } = await environment("Cascade 3DS");
    const strict = await configuration(client, "Declines after 3DS", { soft_decline_cards: "0101" });
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [strict, sandbox] } }],
    });
    for (const drop of [false, true]) {
      const card = (
        await client.post("/cards", { number: "4000000000000101", exp_month: 12, exp_year: 2099 })
      ).body.card;
      const invoice = (await client.post("/invoices", { name: "3DS", amount: "10.00", currency: "EUR" })).body
        .invoice;
      // The first configuration asks for a challenge; the cardholder passes it; its issuer then declines softly.
      const asked = await client.post(`/invoices/${invoice.id}/authorize`, { source: card.id });
      expect(asked.body.customer_action.type).toBe("url");
      const page = await fetch(asked.body.customer_action.value, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "result=approved",
        redirect: "manual",
      });
      expect(page.status).toBe(200);
      const after = await client.post(`/invoices/${invoice.id}/authorize`, {
        source: card.id,
        retry_drop_liability_shift: drop,
      });
      const transaction = (await client.get(`/invoices/${invoice.id}/transactions`)).body.transaction;
      expect(transaction.attempts[1]).toMatchObject({
        gateway_configuration_id: strict,
        outcome: "declined",
      });
      if (drop) {
        // Approved by the next configuration without authentication: no liability shift.
        expect(after.status).toBe(200);
        expect(transaction).toMatchObject({
          status: "authorized",
          gateway_configuration_id: sandbox,
          three_d_s_status: "not-applicable",
        });
        expect(transaction.attempts[2]).toMatchObject({
          gateway_configuration_id: sandbox,
          outcome: "approved",
        });
      } else {
        expect(after.status).toBe(410);
        expect(transaction.status).toBe("failed");
        expect(transaction.attempts[1].cascade).toBe(
          "authenticated with 3DS at this provider: retry_drop_liability_shift not set",
        );
      }
    }
  });
});

describe("the circuit breaker", () => {
  it("opens on an outage, routes payments around it, and closes after a probe once the provider is back", async () => {
    const { client, sandbox } = await environment("Breaker");
    const down = await configuration(client, "Down", { outage: "true" });
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [down, sandbox] } }],
    });
    // Every payment is approved by the next configuration while the first one fails.
    for (let i = 0; i < 5; i++) {
      const paid = await pay(client, "4242424242424242");
      expect(paid.transaction).toMatchObject({ status: "authorized", gateway_configuration_id: sandbox });
      expect(paid.transaction.attempts[0]).toMatchObject({
        gateway_configuration_id: down,
        outcome: "not-done",
        error_code: "gateway.unavailable",
      });
    }
    // Open now: skipped without a call, and said so.
    const around = await pay(client, "4242424242424242");
    expect(around.transaction.attempts).toHaveLength(1);
    expect(around.transaction.routing.skipped).toEqual([
      { gateway_configuration_id: down, reason: "circuit-open" },
    ]);
    const simulated = await client.post("/routing-rules/simulate", {
      amount: "10.00",
      currency: "EUR",
      iin: "424242",
    });
    expect(simulated.body.routing.skipped).toEqual([
      { gateway_configuration_id: down, reason: "circuit-open" },
    ]);

    // The provider recovers; once the breaker's open period is over, one payment probes and closes it.
    await client.put(`/gateway-configurations/${down}`, { settings: { outage: "false" } });
    const later = Date.now() + OPEN_MS + 11_000;
    vi.spyOn(clock, "now").mockImplementation(() => new Date(later));
    const probe = await pay(client, "4242424242424242");
    expect(probe.transaction).toMatchObject({ status: "authorized", gateway_configuration_id: down });
    expect(probe.transaction.routing.probing).toEqual([down]);
    const closed = await pay(client, "4242424242424242");
    expect(closed.transaction).toMatchObject({
      gateway_configuration_id: down,
      routing: { skipped: [], probing: [] },
    });
  });
});

describe("the breaker's counts", () => {
  it("are written once a second for answers, at once for a failure", async () => {
    const { client, sandbox } = await environment("Breaker counts");
    const down = await configuration(client, "Down", { outage: "true" });
    const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
      .body.card;
    await payWith(client, card.id);
    const send = dynamo.send.bind(dynamo);
    const counted: string[] = [];
    vi.spyOn(dynamo, "send").mockImplementation(((command: {
      constructor: { name: string };
      input: { Key?: { pk?: string } };
    }) => {
      const pk = command.input.Key?.pk ?? "";
      if (
        command.constructor.name === "UpdateCommand" &&
        pk.startsWith("health#") &&
        pk.split("#").length === 3
      )
        counted.push(pk.split("#")[1] as string);
      return send(command as never);
    }) as never);
    // Answers within the second (the clock held still): kept, not written one by one.
    vi.spyOn(clock, "now").mockReturnValue(new Date());
    for (let i = 0; i < 3; i++) await payWith(client, card.id);
    expect(counted.filter((id) => id === sandbox).length).toBeLessThanOrEqual(1);
    // A failure: written with the payment that met it.
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [down, sandbox] } }],
    });
    const before = counted.filter((id) => id === down).length;
    await payWith(client, card.id);
    expect(counted.filter((id) => id === down).length).toBe(before + 1);
  });
});

describe("the card schemes' retry rules", () => {
  it("a Mastercard merchant advice code 03 stops further attempts on the card, unless override_mac_blocking", async () => {
    const { client, sandbox } = await environment("MAC 03");
    const other = await configuration(client, "Second");
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [sandbox, other] } }],
    });
    const card = (await client.post("/cards", { number: "5100000000000032", exp_month: 12, exp_year: 2099 }))
      .body.card;
    const first = await payWith(client, card.id);
    expect(first.status).toBe(410);
    expect(first.transaction.attempts).toMatchObject([
      {
        gateway_configuration_id: sandbox,
        outcome: "declined",
        merchant_advice_code: "03",
        cascade: "merchant advice code 03 forbids retries",
      },
    ]);
    const blocked = await payWith(client, card.id);
    expect(blocked.status).toBe(410);
    expect(blocked.body.error_type).toBe("card.do-not-retry");
    // Refused before any provider: no transaction at all.
    expect(blocked.transaction).toBeNull();
    const overridden = await payWith(client, card.id, { override_mac_blocking: true });
    expect(overridden.body.error_type).toBe("card.do-not-honor");
    expect(overridden.transaction.routing.scheme_rules).toContain(
      "mastercard merchant advice code 03 overridden (override_mac_blocking)",
    );
    // With the override, the decline may cascade: both configurations were tried.
    expect(
      overridden.transaction.attempts.map((attempt: Attempt) => attempt.gateway_configuration_id),
    ).toEqual([sandbox, other]);
  });

  it("refuses the 16th Visa reattempt within 30 days without reaching a provider", async () => {
    const { client } = await environment("Visa reattempts");
    const card = (await client.post("/cards", { number: "4000000000002206", exp_month: 12, exp_year: 2099 }))
      .body.card;
    for (let attempt = 0; attempt <= 15; attempt++) {
      const declined = await payWith(client, card.id);
      expect(declined.body.error_type, `attempt ${attempt}`).toBe("card.no-money");
    }
    const refused = await payWith(client, card.id);
    expect(refused.status).toBe(410);
    expect(refused.body.error_type).toBe("card.reattempt-limit");
    expect(refused.transaction).toBeNull();
    const simulated = await client.post("/routing-rules/simulate", {
      amount: "10.00",
      currency: "EUR",
      card_id: card.id,
    });
    expect(simulated.body.routing.scheme_rules).toEqual(["visa reattempt 16 of 15 in 30 days refused"]);
  }, 60_000);
});

describe("money rules through a cascade", () => {
  it("concurrent authorizations of one invoice across a chain approve at most once", async () => {
    const { client, sandbox } = await environment("Cascade concurrency");
    const flaky = await configuration(client, "Soft", { soft_decline_cards: "4242" });
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [flaky, sandbox] } }],
    });
    const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
      .body.card;
    const invoice = (await client.post("/invoices", { name: "Race", amount: "10.00", currency: "EUR" })).body
      .invoice;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => client.post(`/invoices/${invoice.id}/authorize`, { source: card.id })),
    );
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const transaction = (await client.get(`/invoices/${invoice.id}/transactions`)).body.transaction;
    expect(transaction.status).toBe("authorized");
    expect(transaction.attempts.filter((attempt: Attempt) => attempt.outcome === "approved")).toHaveLength(1);
    expect(await approvalsAtProviders(transaction.project_id, transaction.attempts)).toBe(1);
  });

  it("a fault at any write of a cascade leaves one approval at most, and the retry settles the payment", async () => {
    const { client, sandbox } = await environment("Cascade faults");
    const flaky = await configuration(client, "Soft", { soft_decline_cards: "4242" });
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [flaky, sandbox] } }],
    });
    const card = (await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 }))
      .body.card;
    const WRITES = new Set(["PutCommand", "UpdateCommand", "TransactWriteCommand"]);
    const send = dynamo.send.bind(dynamo);
    let writes = 0;
    vi.spyOn(dynamo, "send").mockImplementation(((command: { constructor: { name: string } }) => {
      if (WRITES.has(command.constructor.name)) writes += 1;
      return send(command as never);
    }) as never);
    expect((await payWith(client, card.id)).status).toBe(200);
    vi.restoreAllMocks();
    for (let failAt = 1; failAt <= writes; failAt++) {
      const invoice = (await client.post("/invoices", { name: "Fault", amount: "10.00", currency: "EUR" }))
        .body.invoice;
      let seen = 0;
      vi.spyOn(dynamo, "send").mockImplementation(((command: { constructor: { name: string } }) => {
        if (WRITES.has(command.constructor.name) && ++seen === failAt)
          return Promise.reject(new Error(`Injected fault at write ${failAt}`));
        return send(command as never);
      }) as never);
      await client.post(`/invoices/${invoice.id}/authorize`, { source: card.id });
      vi.restoreAllMocks();
      // The retry, once a reservation the fault left behind has lapsed (a crash looks the same).
      vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
      const retry = await client.post(`/invoices/${invoice.id}/authorize`, { source: card.id });
      vi.restoreAllMocks();
      const transaction = (await client.get(`/invoices/${invoice.id}/transactions`)).body.transaction;
      // Cut off after the first configuration declined and before the cascade was written, the
      // payment is settled from that configuration's record: the decline (a crash ends the cascade).
      // Anywhere else, the retry completes it through the chain.
      const cutBeforeCascade =
        transaction.attempts.length === 1 && transaction.attempts[0].outcome === "declined";
      expect(retry.status, `fault at write ${failAt}: ${retry.text}`).toBe(cutBeforeCascade ? 410 : 200);
      expect(transaction.status).toBe(cutBeforeCascade ? "failed" : "authorized");
      const approved = cutBeforeCascade ? 0 : 1;
      const approvals = transaction.attempts.filter((attempt: Attempt) => attempt.outcome === "approved");
      expect(approvals).toHaveLength(approved);
      expect(
        await approvalsAtProviders(transaction.project_id, transaction.attempts),
        `fault at write ${failAt}`,
      ).toBe(approved);
    }
  }, 120_000);

  it("an approval a provider records after the payment moved on is voided there and recorded", async () => {
    const { client, sandbox } = await environment("Late approval");
    const first = await configuration(client, "First");
    await setRules(client, {
      rules: [{ id: "chain", action: { type: "route", gateway_configuration_ids: [first, sandbox] } }],
    });
    // Fault injection: the first provider approves but the connection breaks before its answer, and
    // its lookup is not yet consistent (it finds nothing): the payment cascades and the next approves.
    const record = tableLedger.record.bind(tableLedger);
    vi.spyOn(tableLedger, "record").mockImplementationOnce(async (...args) => {
      await record(...args);
      throw new Error("Connection reset after the provider processed the request");
    });
    vi.spyOn(tableLedger, "find").mockResolvedValueOnce(undefined);
    const paid = await pay(client, "4242424242424242");
    vi.restoreAllMocks();
    expect(paid.transaction).toMatchObject({ status: "authorized", gateway_configuration_id: sandbox });
    const [left, approved] = paid.transaction.attempts as [Attempt, Attempt];
    expect(left).toMatchObject({ gateway_configuration_id: first, outcome: "not-done" });
    expect(approved).toMatchObject({ gateway_configuration_id: sandbox, outcome: "approved" });
    // Two providers hold an approval now; asking them where the payment stands voids the extra one.
    expect(await approvalsAtProviders(paid.transaction.project_id, paid.transaction.attempts)).toBe(2);
    const synced = await client.put(`/invoices/${paid.invoiceId}/sync-with-psp`, {});
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    const after = (await client.get(`/invoices/${paid.invoiceId}/transactions`)).body.transaction;
    expect(after.status).toBe("authorized");
    expect(after.attempts[0].voided_extra_at).toEqual(expect.stringMatching(/^\d{4}-/));
    expect(after.attempts[1].voided_extra_at ?? null).toBeNull();
    const voided = await sandboxConnector.lookup({
      scope: paid.transaction.project_id,
      kind: "void",
      reference: `${left.reference}-void`,
      gatewayReference: null,
      providerState: null,
    });
    expect(voided).toEqual({ status: "found", outcome: { status: "approved" } });
    // Asked again, nothing more is voided.
    await client.put(`/invoices/${paid.invoiceId}/sync-with-psp`, {});
    const again = (await client.get(`/invoices/${paid.invoiceId}/transactions`)).body.transaction;
    expect(again.attempts[0].voided_extra_at).toBe(after.attempts[0].voided_extra_at);
  });
});
