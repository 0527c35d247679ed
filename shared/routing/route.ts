import { clock } from "../clock.ts";
import { findCustomer } from "../customers/store.ts";
import type { Scope } from "../db/keys.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { cachedGatewaySetup, type GatewaySetup } from "../gateways/store.ts";
import { ApiError } from "../http/errors.ts";
import { decide, needsCountry, type PaymentFacts, type RoutingExplanation } from "./decide.ts";
import { breakers } from "./health.ts";
import { rulesOf } from "./store.ts";

/**
 * Routes a card payment: the environment's rules and configurations from the container's cache
 * (`cachedGatewaySetup`), the breakers from theirs (`health.ts`); the customer is read only when a
 * rule asks for a country the invoice's shipping address does not give.
 */
export interface RouteInput {
  scope: Scope;
  invoice: {
    amount: string;
    currency: string;
    customer_id: string | null;
    metadata: Readonly<Record<string, string>>;
    shipping?: { country_code?: string | null } | null;
  };
  transactionId: string;
  card: { scheme: string | null; iin: string };
  initiator: PaymentFacts["initiator"];
  pinned: string | null;
}

export async function routePayment(input: RouteInput): Promise<RoutingExplanation> {
  const setup = await cachedGatewaySetup(input.scope);
  const shippingCountry = input.invoice.shipping?.country_code ?? null;
  const country =
    shippingCountry ??
    (needsCountry(rulesOf(setup)) && input.invoice.customer_id
      ? ((await findCustomer(input.scope, input.invoice.customer_id))?.country_code ?? null)
      : null);
  return decideIn(
    setup,
    {
      transactionId: input.transactionId,
      amount: input.invoice.amount,
      currency: input.invoice.currency,
      card: input.card,
      country,
      initiator: input.initiator,
      metadata: input.invoice.metadata,
    },
    input.pinned,
  );
}

/** The decision for a payment in an environment's gateway setup, with its card configurations' breakers. */
export async function decideIn(
  setup: GatewaySetup,
  facts: PaymentFacts,
  pinned: string | null,
): Promise<RoutingExplanation> {
  const cards = setup.configurations
    .filter((configuration) => configuration.payment_method === "card")
    .map((configuration) => configuration.id);
  return decide(rulesOf(setup), setup.configurations, await breakers(cards), facts, {
    pinned,
    now: clock.now().getTime(),
  });
}

/**
 * The configuration a card verification (a customer token's) goes through: the first enabled card
 * configuration in the environment's default order, else its oldest.
 */
export async function verificationConfiguration(scope: Scope): Promise<GatewayConfiguration> {
  const setup = await cachedGatewaySetup(scope);
  const order = rulesOf(setup).default_order;
  const rank = (configuration: GatewayConfiguration) => {
    const position = order.indexOf(configuration.id);
    return position === -1 ? order.length : position;
  };
  const found = setup.configurations
    .filter(
      (configuration) =>
        configuration.payment_method === "card" && configuration.enabled && configuration.deleted_at === null,
    )
    .sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : 1))[0];
  if (!found) {
    throw new ApiError(
      400,
      "gateway.not-configured",
      "No enabled card gateway is configured for this project.",
    );
  }
  return found;
}
