import { expect } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client } from "../e2e/harness.ts";

/**
 * Configures `gateway` with `settings` in the client's environment and disables the environment's
 * sandbox card configuration, so that card payments go through the new one only (without routing
 * rules, a payment goes through the enabled card configurations, oldest first: none is left to
 * cascade to). Returns the new configuration's id.
 */
export async function payOnlyThrough(
  client: Client,
  gateway: string,
  settings: Record<string, string>,
): Promise<string> {
  const made = await client.post(`/gateways/${gateway}/gateway-configurations`, { name: gateway, settings });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const cards = (await client.get("/gateway-configurations?filter=card-payments")).body
    .gateway_configurations;
  for (const configuration of cards as Array<{ id: string; gateway_name: string }>) {
    if (configuration.gateway_name !== "sandbox") continue;
    expect((await client.put(`/gateway-configurations/${configuration.id}`, { enabled: false })).status).toBe(
      200,
    );
  }
  return made.body.gateway_configuration.id;
}

/** A sandbox environment of a project of its own, paying by card through `gateway` only. */
export interface ProviderEnvironment {
  client: Client;
  /** The shopper's browser: the project id alone (the public key). */
  browser: Client;
  scope: string;
  configurationId: string;
}

export async function providerEnvironment(
  url: string,
  name: string,
  gateway: string,
  settings: Record<string, string>,
): Promise<ProviderEnvironment> {
  const project = await createProject(name);
  const client = api(url, project.sandbox);
  return {
    client,
    browser: api(url, { project_id: project.sandbox.project_id, private_key: "" }),
    scope: project.sandbox.project_id,
    configurationId: await payOnlyThrough(client, gateway, settings),
  };
}

/** An invoice of 10.00 EUR with a return URL (for the providers' 3DS pages), and `fields`. */
export async function providerInvoice(env: ProviderEnvironment, fields: Record<string, unknown> = {}) {
  const { status, body } = await env.client.post("/invoices", {
    name: "Order",
    amount: "10.00",
    currency: "EUR",
    return_url: "https://shop.example/done",
    ...fields,
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.invoice.id as string;
}
