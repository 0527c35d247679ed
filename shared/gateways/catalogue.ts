import type { NativeApmParameter, PaymentConnector } from "./connector.ts";
import { sandboxConnector } from "./sandbox/gateway.ts";
import { SANDBOX_APM_PARAMETERS } from "./sandbox/native-apm.ts";

/**
 * The gateways this service knows: how each shows (display data, as `gateway` in a configuration
 * expanded with `expand_merchant_accounts`), the payment methods it offers, the settings a
 * configuration of it takes, and its connector. Adding a provider is its connector module plus
 * one entry here.
 */
export type PaymentMethod = "card" | "native-apm";

export interface SettingDefinition {
  name: string;
  /** Sealed in the vault and never returned (API keys); others are returned as set. */
  secret: boolean;
  required: boolean;
  description: string;
}

export interface MethodDefinition {
  display_name: string;
  flows: readonly string[];
  tags: readonly string[];
  /** For a native APM: the parameters its first step takes (`native_apm_config`). */
  native_apm_parameters?: readonly NativeApmParameter[];
}

export interface GatewayDefinition {
  name: string;
  description: string;
  url: string;
  /** Served inline (a data URI): nothing is loaded from a third party to show it. */
  logo_url: string;
  can_refund: boolean;
  methods: Partial<Record<PaymentMethod, MethodDefinition>>;
  settings: readonly SettingDefinition[];
  /** The connector for a configuration with these (opened) settings. */
  connect(settings: Readonly<Record<string, string>>): PaymentConnector;
}

const SANDBOX_LOGO = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#f5c542"/><path d="M14 44h36M20 44c0-8 5-14 12-14s12 6 12 14M26 24a6 6 0 1 0 12 0a6 6 0 1 0-12 0" stroke="#3b2f0b" stroke-width="4" fill="none" stroke-linecap="round"/></svg>',
).toString("base64")}`;

/**
 * A sandbox `api_key` that starts with this is refused by the sandbox, as a provider refuses wrong
 * credentials: every operation then fails with `gateway.validation-error`.
 */
export const SANDBOX_REFUSED_KEY_PREFIX = "invalid";

const sandbox: GatewayDefinition = {
  name: "sandbox",
  description:
    "Test payments without a provider: card outcomes follow the sandbox test cards, the native APM follows its test email and codes.",
  url: "https://docs.example.com/sandbox",
  logo_url: SANDBOX_LOGO,
  can_refund: true,
  methods: {
    card: {
      display_name: "Sandbox cards",
      flows: ["one-off", "recurring", "tokenization"],
      tags: ["credit-card"],
    },
    "native-apm": {
      display_name: "Sandbox APM",
      flows: ["one-off"],
      tags: ["native-alternative-payment-method"],
      native_apm_parameters: SANDBOX_APM_PARAMETERS,
    },
  },
  settings: [
    {
      name: "merchant_account",
      secret: false,
      required: false,
      description: "Your account's name at the provider (free text in the sandbox).",
    },
    {
      name: "api_key",
      secret: true,
      required: false,
      description: `The provider's API key. The sandbox accepts any key, except one starting with "${SANDBOX_REFUSED_KEY_PREFIX}", which it refuses as wrong credentials.`,
    },
  ],
  connect: (settings) =>
    settings.api_key?.startsWith(SANDBOX_REFUSED_KEY_PREFIX) ? refusedCredentials : sandboxConnector,
};

/** What a provider answers every request made with wrong credentials: nothing is done or recorded. */
const refusedCredentials: PaymentConnector = (() => {
  const refusal = {
    status: "declined" as const,
    errorType: "gateway.validation-error" as const,
    message: "The gateway refused the credentials of this gateway configuration: check its api_key.",
  };
  const checks = { cvc: "unavailable" as const, avs: "unavailable" as const };
  return {
    card: {
      authorize: async () => ({ ...refusal, checks, threeDS: "not-applicable" as const }),
      incrementAuthorization: async () => refusal,
      verifyCard: async () => ({ ...refusal, checks }),
    },
    nativeApm: { pay: async () => refusal },
    capture: async () => refusal,
    void: async () => refusal,
    refund: async () => refusal,
    lookup: async () => ({ status: "not-found" as const }),
  };
})();

export const GATEWAYS: Readonly<Record<string, GatewayDefinition>> = { sandbox };

export function gatewayNamed(name: string): GatewayDefinition | undefined {
  return Object.hasOwn(GATEWAYS, name) ? GATEWAYS[name] : undefined;
}

/** A gateway as the API shows it (`gateway` of an expanded configuration). */
export function presentGateway(definition: GatewayDefinition, method: PaymentMethod) {
  const shown = definition.methods[method];
  return {
    id: definition.name,
    name: definition.name,
    display_name: shown?.display_name ?? definition.name,
    logo_url: definition.logo_url,
    url: definition.url,
    flows: shown?.flows ?? [],
    tags: shown?.tags ?? [],
    can_refund: definition.can_refund,
    description: definition.description,
  };
}
