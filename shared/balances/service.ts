import { usableCard } from "../cards/service.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { connectGateway } from "../gateways/connectors.ts";
import { connectorOf } from "../gateways/routing.ts";
import { cachedConfigurations } from "../gateways/store.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { findTokenById } from "../tokens/store.ts";

/**
 * `GET /balances/tokens/{id}`: what a customer token's stored-value card (a gift card) holds, asked of
 * the provider that holds it: the configuration that verified the token, else the environment's
 * first enabled card configuration (oldest first, as payments go without routing rules). The sandbox
 * gateway's gift cards hold vouchers (`shared/gateways/sandbox/gift-cards.ts`); Stripe and Adyen
 * tell no card balances through their connectors here. The card's number is never opened: a balance
 * is asked by the card's public fields (its fingerprint, IIN and last four digits).
 */
export async function tokenBalance(caller: Caller, tokenId: string) {
  const token = isId("token", tokenId) ? await findTokenById(caller.projectId, tokenId) : undefined;
  if (!token) throw notFound("token", tokenId);
  if (token.card_id === null) throw noBalance(tokenId, "it holds no card");
  const [{ card }, configurations] = await Promise.all([
    usableCard(caller, token.card_id),
    cachedConfigurations(caller.projectId),
  ]);
  const configuration = providerOf(token.gateway_configuration_id, configurations);
  if (!configuration) throw noBalance(tokenId, "the environment has no enabled card configuration to ask");
  // Whether the gateway tells balances at all is asked before its secret settings are opened.
  const context = { configurationId: configuration.id, sandbox: configuration.sandbox };
  if (!(await connectGateway(configuration.gateway_name, configuration.settings, context)).card?.balance) {
    throw new ApiError(
      400,
      "request.gateway.balance-not-supported",
      `The ${configuration.gateway_name} gateway (configuration ${configuration.id}) tells no card balances.`,
    );
  }
  const operations = (await connectorOf(configuration)).card;
  if (!operations?.balance) throw new Error(`The ${configuration.gateway_name} connector lost its balances`);
  const outcome = await operations.balance({
    scope: caller.projectId,
    card: { fingerprint: card.fingerprint, iin: card.iin, last4: card.last_4_digits },
  });
  if (outcome.status === "none") throw noBalance(tokenId, "its card is not a stored-value card");
  return { vouchers: outcome.vouchers, available_balance: outcome.available, customer_action: null };
}

function providerOf(
  verifiedWith: string | null,
  configurations: readonly GatewayConfiguration[],
): GatewayConfiguration | undefined {
  const cards = configurations.filter(
    (configuration) => configuration.payment_method === "card" && configuration.deleted_at === null,
  );
  return (
    cards.find((configuration) => configuration.id === verifiedWith) ??
    cards
      .filter((configuration) => configuration.enabled)
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0))[0]
  );
}

const noBalance = (tokenId: string, why: string) =>
  new ApiError(400, "request.token.no-balance", `Token ${tokenId} has no balance: ${why}.`);
