import type { NativeApmParameter } from "./connector.ts";
import { SANDBOX_APM_PARAMETERS } from "./sandbox/native-apm.ts";
import { REHEARSAL_SETTINGS } from "./sandbox/rehearsal.ts";

/**
 * The gateways this service knows: how each shows (display data, as `gateway` in a configuration
 * expanded with `expand_merchant_accounts`), the payment methods it offers, the settings a
 * configuration of it takes. Its connector is made by `connectors.ts`: adding a provider is its
 * connector module, one entry here and one there.
 */
export type PaymentMethod = "card" | "native-apm";

export interface SettingDefinition {
  name: string;
  /** Sealed in the vault and never returned (API keys); others are returned as set. */
  secret: boolean;
  /** `live`: required in a live environment, refused in a sandbox (where it has no meaning). */
  required: boolean | "live";
  description: string;
  /**
   * Why `value` cannot be this setting in this environment (a live key in a sandbox, a test key in
   * live, a malformed value); undefined when it can.
   */
  check?: (value: string, environment: { sandbox: boolean }) => string | undefined;
}

/** What a connector is made for besides its settings: the configuration and its environment. */
export interface ConnectorContext {
  configurationId: string;
  /** A sandbox environment's configuration talks to the provider's test platform only. */
  sandbox: boolean;
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
    ...REHEARSAL_SETTINGS,
  ],
};

const STRIPE_LOGO = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#635bff"/><path d="M30 25c0-2 2-3 5-3 4 0 8 1 11 3v-9c-3-1-7-2-11-2-9 0-15 5-15 12 0 12 16 10 16 15 0 2-2 3-5 3-4 0-9-2-12-4v9c4 2 8 3 12 3 9 0 15-4 15-12 0-13-16-11-16-15z" fill="#fff"/></svg>',
).toString("base64")}`;

/** A Stripe secret or restricted key of the environment's kind: test keys in a sandbox, live keys in live. */
function stripeKeyProblem(value: string, { sandbox }: { sandbox: boolean }): string | undefined {
  const kind = sandbox ? "test" : "live";
  if (new RegExp(`^(sk|rk)_${kind}_[A-Za-z0-9]+$`).test(value)) return undefined;
  if (/^(sk|rk)_(test|live)_/.test(value)) {
    return sandbox
      ? "must be a test key (sk_test_… or rk_test_…): a sandbox environment never reaches Stripe's live mode"
      : "must be a live key (sk_live_… or rk_live_…): a live environment takes no test key";
  }
  return `must be a Stripe secret key (sk_${kind}_…) or restricted key (rk_${kind}_…)`;
}

const stripe: GatewayDefinition = {
  name: "stripe",
  description:
    "Card payments through your Stripe account (PaymentIntents, manual capture, 3-D Secure by redirect). Raw card data APIs must be enabled on the account.",
  url: "https://stripe.com",
  logo_url: STRIPE_LOGO,
  can_refund: true,
  methods: {
    card: { display_name: "Stripe", flows: ["one-off", "recurring", "tokenization"], tags: ["credit-card"] },
  },
  settings: [
    {
      name: "secret_key",
      secret: true,
      required: true,
      description:
        "Your Stripe secret key (sk_test_… in a sandbox environment, sk_live_… in live), or a restricted key with PaymentIntents, SetupIntents, PaymentMethods and Refunds write access.",
      check: stripeKeyProblem,
    },
    {
      name: "webhook_secret",
      secret: true,
      required: false,
      description:
        "The signing secret (whsec_…) of the webhook endpoint you registered at Stripe for <API>/gateway-webhooks/<this configuration's id>.",
      check: (value) =>
        /^whsec_[A-Za-z0-9+/=]+$/.test(value)
          ? undefined
          : "must be a webhook endpoint's signing secret (whsec_…)",
    },
  ],
};

const ADYEN_LOGO = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#0abf53"/><path d="M14 40V26h6v14zm10 0V22h6v18zm10 0V26h6v14zm10 0V30h6v10z" fill="#fff"/></svg>',
).toString("base64")}`;

const adyen: GatewayDefinition = {
  name: "adyen",
  description:
    "Card payments through your Adyen merchant account (Checkout API v71, manual capture, 3-D Secure by redirect). Raw card data (PCI) must be enabled for the API credential.",
  url: "https://www.adyen.com",
  logo_url: ADYEN_LOGO,
  can_refund: true,
  methods: {
    card: { display_name: "Adyen", flows: ["one-off", "recurring", "tokenization"], tags: ["credit-card"] },
  },
  settings: [
    {
      name: "api_key",
      secret: true,
      required: true,
      description: "The API key of your Adyen API credential (Checkout API, raw card data).",
      check: (value) => (/^\S{16,}$/.test(value) ? undefined : "must be an Adyen API key"),
    },
    {
      name: "merchant_account",
      secret: false,
      required: true,
      description: "The merchant account payments are made for.",
      check: (value) =>
        /^[A-Za-z0-9_-]{1,80}$/.test(value) ? undefined : "must be an Adyen merchant account name",
    },
    {
      name: "hmac_key",
      secret: true,
      required: false,
      description:
        "The HMAC key (hex) of the standard webhook you set up at Adyen for <API>/gateway-webhooks/<this configuration's id>: it verifies every notification.",
      check: (value) =>
        /^([0-9A-Fa-f]{2}){16,64}$/.test(value)
          ? undefined
          : "must be the webhook's HMAC key, in hexadecimal",
    },
    {
      name: "live_url_prefix",
      secret: false,
      required: "live",
      description:
        "Your live endpoint's prefix ([random]-[company name], from Customer Area > Developers > API URLs). Live environments only: a sandbox uses Adyen's test endpoint.",
      check: (value) =>
        /^[a-z0-9]+(-[a-z0-9]+)*$/i.test(value) ? undefined : "must be the prefix of your live endpoint",
    },
  ],
};

export const GATEWAYS: Readonly<Record<string, GatewayDefinition>> = { sandbox, stripe, adyen };

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
