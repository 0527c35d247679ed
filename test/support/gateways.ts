import { expect } from "vitest";
import type { Client } from "../e2e/harness.ts";

/**
 * Configures `gateway` with `settings` in the client's environment and disables the environment's
 * sandbox card configuration, so that card payments go through the new one only (a payment takes
 * the oldest enabled card configuration). Returns the new configuration's id.
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
