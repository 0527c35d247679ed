import { newId } from "../ids.ts";
import type { CardConnector } from "./connector.ts";
import { sandboxConnector } from "./sandbox/card.ts";

/**
 * Gateway configurations select the connector a payment method of an environment goes through.
 * They live in the environment's partition (`keys.gatewayConfiguration`): one query reads them all.
 * Every environment starts with a `sandbox` configuration for cards (`createProject`).
 */
export type GatewayName = "sandbox";
export type PaymentMethod = "card";

export interface GatewayConfiguration {
  id: string;
  project_id: string;
  gateway_name: GatewayName;
  payment_method: PaymentMethod;
  enabled: boolean;
  sandbox: boolean;
  created_at: string;
}

const CARD_CONNECTORS: Record<GatewayName, CardConnector> = { sandbox: sandboxConnector };

export function cardConnector(configuration: GatewayConfiguration): CardConnector {
  return CARD_CONNECTORS[configuration.gateway_name];
}

export function sandboxCardConfiguration(
  projectId: string,
  sandbox: boolean,
  now: Date,
): GatewayConfiguration {
  return {
    id: newId("gatewayConfiguration"),
    project_id: projectId,
    gateway_name: "sandbox",
    payment_method: "card",
    enabled: true,
    sandbox,
    created_at: now.toISOString(),
  };
}
