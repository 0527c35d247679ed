import { clock } from "../clock.ts";
import { findCustomer } from "../customers/store.ts";
import type { Scope } from "../db/keys.ts";
import { cachedGatewaySetup } from "../gateways/store.ts";
import { type Decision, decide, needsCountry, type PaymentFacts } from "./decide.ts";
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

export async function routePayment(input: RouteInput): Promise<Decision["explanation"]> {
  const setup = await cachedGatewaySetup(input.scope);
  const rules = rulesOf(setup);
  const cards = setup.configurations.filter((configuration) => configuration.payment_method === "card");
  const health = await breakers(cards.map((configuration) => configuration.id));
  const shippingCountry = input.invoice.shipping?.country_code ?? null;
  const country =
    shippingCountry ??
    (needsCountry(rules) && input.invoice.customer_id
      ? ((await findCustomer(input.scope, input.invoice.customer_id))?.country_code ?? null)
      : null);
  return decide(
    rules,
    setup.configurations,
    health,
    {
      transactionId: input.transactionId,
      amount: input.invoice.amount,
      currency: input.invoice.currency,
      card: input.card,
      country,
      initiator: input.initiator,
      metadata: input.invoice.metadata,
    },
    { pinned: input.pinned, now: clock.now().getTime() },
  );
}
