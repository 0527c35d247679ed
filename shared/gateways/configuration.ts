import type { SealedSecret } from "../cards/vault.ts";
import { newId } from "../ids.ts";
import {
  GATEWAYS,
  type GatewayDefinition,
  gatewayNamed,
  type PaymentMethod,
  presentGateway,
} from "./catalogue.ts";

/**
 * Gateway configurations (`gway_conf_…`): which gateway an environment uses for a payment method,
 * with that gateway's settings. Secret settings are kept sealed by the vault (`secrets`) and never
 * leave the service. Every environment starts with the sandbox's card and native APM configurations.
 * A deleted configuration is kept (marked `deleted_at`) so that the payments made through it can
 * still be captured and refunded; it is neither shown nor used for new payments.
 */
export interface GatewayConfiguration {
  id: string;
  project_id: string;
  gateway_name: string;
  payment_method: PaymentMethod;
  name: string | null;
  enabled: boolean;
  default_currency: string | null;
  /** The currencies it takes (routing skips it for a payment in another); null: every currency. */
  currencies: string[] | null;
  /** The gateway's settings that are not secret, as set. */
  settings: Record<string, string>;
  /** The secret settings, sealed (`cards/vault.ts`, field `setting:<name>`). */
  secrets: Record<string, SealedSecret>;
  sandbox: boolean;
  created_at: string;
  deleted_at: string | null;
}

/** Configurations stored before names, currencies and settings existed get their defaults. */
export function withDefaults(stored: Partial<GatewayConfiguration> & Pick<GatewayConfiguration, "id">) {
  return {
    name: null,
    default_currency: null,
    currencies: null,
    settings: {},
    secrets: {},
    deleted_at: null,
    ...stored,
  } as GatewayConfiguration;
}

export function definitionOf(configuration: GatewayConfiguration): GatewayDefinition {
  const definition = gatewayNamed(configuration.gateway_name);
  if (!definition) throw new Error(`Configuration ${configuration.id} names an unknown gateway`);
  return definition;
}

export function newConfiguration(
  input: {
    projectId: string;
    sandbox: boolean;
    gateway: GatewayDefinition;
    paymentMethod: PaymentMethod;
    name: string | null;
    enabled: boolean;
    defaultCurrency: string | null;
    currencies?: string[] | null;
    settings: Record<string, string>;
  },
  now: Date,
): GatewayConfiguration {
  return {
    id: newId("gatewayConfiguration"),
    project_id: input.projectId,
    gateway_name: input.gateway.name,
    payment_method: input.paymentMethod,
    name: input.name,
    enabled: input.enabled,
    default_currency: input.defaultCurrency,
    currencies: input.currencies ?? null,
    settings: input.settings,
    secrets: {},
    sandbox: input.sandbox,
    created_at: now.toISOString(),
    deleted_at: null,
  };
}

/** The configurations every environment starts with: the sandbox for cards and its native APM. */
export function startingConfigurations(
  projectId: string,
  sandbox: boolean,
  now: Date,
): GatewayConfiguration[] {
  const gateway = GATEWAYS.sandbox as GatewayDefinition;
  const base = { projectId, sandbox, gateway, enabled: true, defaultCurrency: null, settings: {} };
  return [
    newConfiguration({ ...base, paymentMethod: "card", name: "Sandbox cards" }, now),
    newConfiguration({ ...base, paymentMethod: "native-apm", name: "Sandbox APM" }, now),
  ];
}

/** The id a native APM payment names its configuration by: `<configuration id>.<gateway name>`. */
export function nativePaymentId(configuration: GatewayConfiguration): string {
  return `${configuration.id}.${configuration.gateway_name}`;
}

/** `expandGateway`: show the gateway's display data (`expand_merchant_accounts=true`). */
export function presentConfiguration(configuration: GatewayConfiguration, expandGateway: boolean) {
  const definition = definitionOf(configuration);
  const parameters = definition.methods[configuration.payment_method]?.native_apm_parameters;
  return {
    id: configuration.id,
    project_id: configuration.project_id,
    gateway: expandGateway ? presentGateway(definition, configuration.payment_method) : null,
    gateway_id: definition.name,
    gateway_name: definition.name,
    name: configuration.name,
    enabled: configuration.enabled,
    default_currency: configuration.default_currency,
    currencies: configuration.currencies,
    payment_method: configuration.payment_method,
    native_apm_config:
      configuration.payment_method === "native-apm" ? { parameters: [...(parameters ?? [])] } : null,
    settings: configuration.settings,
    created_at: configuration.created_at,
    sandbox: configuration.sandbox,
  };
}

export type PresentedConfiguration = ReturnType<typeof presentConfiguration>;
