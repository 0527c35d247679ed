import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Gateway configurations test");
const client = local.sandbox;

async function configurations(query = "") {
  const { status, body } = await client.get(`/gateway-configurations${query}`);
  expect(status).toBe(200);
  return body;
}

async function created(body: Record<string, unknown> = {}) {
  const { status, body: answer } = await client.post("/gateways/sandbox/gateway-configurations", body);
  expect(status, JSON.stringify(answer)).toBe(200);
  return answer.gateway_configuration;
}

describe("gateway configurations", () => {
  it("start with the sandbox for cards and the sandbox native APM in every environment", async () => {
    for (const environment of [local.sandbox, local.live]) {
      const { body } = await environment.get("/gateway-configurations");
      expect(
        body.gateway_configurations.map((item: { payment_method: string }) => item.payment_method).sort(),
      ).toEqual(["card", "native-apm"]);
      expect(body).toMatchObject({ success: true, count: 2, total_count: 2, has_more: false });
    }
  });

  it("show the spec's shape, with the native APM's config and no expanded gateway unless asked", async () => {
    const { gateway_configurations } = await configurations("?filter=native-alternative-payment-methods");
    expect(gateway_configurations).toHaveLength(1);
    expect(gateway_configurations[0]).toEqual({
      id: expect.stringMatching(/^gway_conf_/),
      project_id: local.project.sandbox.project_id,
      gateway: null,
      gateway_id: "sandbox",
      gateway_name: "sandbox",
      name: "Sandbox APM",
      enabled: true,
      default_currency: null,
      currencies: null,
      payment_method: "native-apm",
      native_apm_config: { parameters: [{ key: "email", type: "email", length: null, required: true }] },
      settings: {},
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      sandbox: true,
    });
  });

  it("expand the gateway with expand_merchant_accounts=true, and take every 'not asked' form as not asked", async () => {
    const expanded = await configurations("?expand_merchant_accounts=true");
    for (const item of expanded.gateway_configurations) {
      expect(item.gateway).toEqual({
        id: "sandbox",
        name: "sandbox",
        display_name: item.payment_method === "card" ? "Sandbox cards" : "Sandbox APM",
        logo_url: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
        url: expect.any(String),
        flows: expect.any(Array),
        tags: expect.any(Array),
        can_refund: true,
        description: expect.any(String),
      });
    }
    for (const query of [
      "?expand_merchant_accounts=null",
      "?expand_merchant_accounts=false",
      "?expand_merchant_accounts=",
      "?&expand_merchant_accounts",
      "?expand_merchant_accounts=None",
      "?&filter=&limit=&end_before=&start_after=",
      "?",
    ]) {
      const body = await configurations(query);
      expect(body.gateway_configurations, query).toHaveLength(2);
      for (const item of body.gateway_configurations) expect(item.gateway, query).toBeNull();
    }
    const one = expanded.gateway_configurations[0];
    const single = await client.get(`/gateway-configurations/${one.id}?expand_merchant_accounts=True`);
    expect(single.body.gateway_configuration.gateway.name).toBe("sandbox");
  });

  it("refuse an unknown filter or flag value with a 400 naming it", async () => {
    const filter = await client.get("/gateway-configurations?filter=everything");
    expect(filter.status).toBe(400);
    expect(filter.body.invalid_fields).toEqual([{ name: "filter", message: expect.any(String) }]);
    const flag = await client.get("/gateway-configurations?expand_merchant_accounts=maybe");
    expect(flag.status).toBe(400);
    expect(flag.body.invalid_fields[0].name).toBe("expand_merchant_accounts");
  });

  it("are created for a gateway, changed, disabled and deleted", async () => {
    const made = await created({
      name: "Backup cards",
      default_currency: "eur",
      settings: { merchant_account: "acme" },
    });
    expect(made).toMatchObject({
      name: "Backup cards",
      default_currency: "EUR",
      enabled: true,
      payment_method: "card",
      settings: { merchant_account: "acme" },
    });
    const changed = await client.put(`/gateway-configurations/${made.id}`, {
      enabled: false,
      name: "Old backup",
    });
    expect(changed.body.gateway_configuration).toMatchObject({
      enabled: false,
      name: "Old backup",
      default_currency: "EUR",
    });
    // Disabled ones are listed only when asked.
    const ids = (body: { gateway_configurations: { id: string }[] }) =>
      body.gateway_configurations.map((item) => item.id);
    expect(ids(await configurations())).not.toContain(made.id);
    expect(ids(await configurations("?with_disabled=true"))).toContain(made.id);

    expect((await client.del(`/gateway-configurations/${made.id}`)).body).toEqual({ success: true });
    expect((await client.get(`/gateway-configurations/${made.id}`)).status).toBe(404);
    expect((await client.del(`/gateway-configurations/${made.id}`)).status).toBe(404);
    expect(ids(await configurations("?with_disabled=true"))).not.toContain(made.id);
  });

  it("create a native APM configuration when asked for that payment method", async () => {
    const made = await created({ payment_method: "native-apm", name: "Second APM" });
    expect(made.native_apm_config).toEqual({
      parameters: [{ key: "email", type: "email", length: null, required: true }],
    });
    await client.del(`/gateway-configurations/${made.id}`);
  });

  it("refuse unknown gateways, unknown settings and bad fields, naming each, and store nothing", async () => {
    expect((await client.post("/gateways/acme/gateway-configurations", {})).body.error_type).toBe(
      "resource.gateway.not-found",
    );
    const before = (await configurations("?with_disabled=true")).total_count;
    const unknown = await client.post("/gateways/sandbox/gateway-configurations", {
      settings: { password: "x" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.invalid_fields).toEqual([{ name: "settings.password", message: expect.any(String) }]);
    const bad = await client.post("/gateways/sandbox/gateway-configurations", {
      default_currency: "XYZ",
      enabled: "perhaps",
      name: "x".repeat(81),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.invalid_fields.map((field: { name: string }) => field.name).sort()).toEqual([
      "default_currency",
      "enabled",
      "name",
    ]);
    expect((await configurations("?with_disabled=true")).total_count).toBe(before);
  });

  it("seal secret settings: never returned, never stored in clear, and used by the gateway", async () => {
    const made = await created({ settings: { api_key: "sk_live_supersecret", merchant_account: "acme" } });
    expect(made.settings).toEqual({ merchant_account: "acme" });
    expect(JSON.stringify(made)).not.toContain("supersecret");
    expect(JSON.stringify((await client.get(`/gateway-configurations/${made.id}`)).body)).not.toContain(
      "supersecret",
    );
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: config.tableName,
        Key: keys.gatewayConfiguration(local.project.sandbox.project_id, made.id),
      }),
    );
    expect(JSON.stringify(Item)).not.toContain("supersecret");
    expect(Item?.secrets.api_key).toMatchObject({ v: 1, key: expect.any(String), data: expect.any(String) });
    await client.del(`/gateway-configurations/${made.id}`);
  });

  it("pay through the configuration: a refused key fails payments with a gateway error", async () => {
    const { gateway_configurations } = await configurations("?filter=card-payments");
    const [sandboxCards] = gateway_configurations;
    // The starting card configuration, given a key the sandbox refuses.
    await client.put(`/gateway-configurations/${sandboxCards.id}`, { settings: { api_key: "invalid-key" } });
    const card = await client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 });
    const invoice = await client.post("/invoices", { name: "Order", amount: "5.00", currency: "USD" });
    const refused = await client.post(`/invoices/${invoice.body.invoice.id}/authorize`, {
      source: card.body.card.id,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("gateway.validation-error");
    // Removing the key (an empty value) makes the same configuration work again.
    await client.put(`/gateway-configurations/${sandboxCards.id}`, { settings: { api_key: "" } });
    const other = await client.post("/invoices", { name: "Order", amount: "5.00", currency: "USD" });
    const paid = await client.post(`/invoices/${other.body.invoice.id}/authorize`, {
      source: card.body.card.id,
    });
    expect(paid.status).toBe(200);
  });

  it("are not seen, changed or deleted from another environment or project (404)", async () => {
    const { gateway_configurations } = await configurations();
    const [mine] = gateway_configurations;
    const other = await createProject("Other project");
    for (const stranger of [local.live, api(local.url, other.sandbox)]) {
      expect((await stranger.get(`/gateway-configurations/${mine.id}`)).status).toBe(404);
      expect((await stranger.put(`/gateway-configurations/${mine.id}`, { enabled: false })).status).toBe(404);
      expect((await stranger.del(`/gateway-configurations/${mine.id}`)).status).toBe(404);
    }
    expect((await client.get(`/gateway-configurations/${mine.id}`)).body.gateway_configuration.enabled).toBe(
      true,
    );
  });
});
