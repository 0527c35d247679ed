import { cardVault } from "../cards/vault.ts";
import type { Scope } from "../db/keys.ts";
import { ApiError, notFound } from "../http/errors.ts";
import type { PaymentMethod } from "./catalogue.ts";
import type { GatewayConfiguration } from "./configuration.ts";
import type { PaymentConnector } from "./connector.ts";
import { connectGateway } from "./connectors.ts";
import { cachedConfigurations, readConfigurations } from "./store.ts";

/**
 * A payment's configuration by its id (or the reference a request names), and its connector. Which
 * configuration a new card payment goes through is routing's decision (`shared/routing`). Reads the
 * environment's configurations through the container's cache (`store.ts`).
 */

/**
 * The configuration of a payment made earlier (deleted or disabled since, it still serves that
 * payment's capture and refunds). Read again when the cache does not know it yet.
 */
export async function configurationById(scope: Scope, id: string): Promise<GatewayConfiguration> {
  const found =
    (await cachedConfigurations(scope)).find((configuration) => configuration.id === id) ??
    (await readConfigurations(scope)).find((configuration) => configuration.id === id);
  if (!found) throw new Error(`Gateway configuration ${id} of ${scope} is missing`);
  return found;
}

/**
 * The configuration a payment names (`<configuration id>.<gateway name>`, or the id alone): one of
 * this environment, for `method`. For a new payment it must be enabled and not deleted; another
 * environment's (or project's) is unknown here: a 404, as a deleted one; a disabled one is a 400 that
 * says so. A payment made through it before (`madeThrough`: the invoice's transaction, when it went
 * through this very configuration) is still served by it, disabled or deleted since: its next step,
 * its details and its capture.
 */
export async function configurationForPayment(
  scope: Scope,
  reference: string,
  method: PaymentMethod,
  field: string,
  madeThrough?: { gateway_configuration_id: string | null },
): Promise<GatewayConfiguration> {
  const [id, gatewayName, extra] = reference.split(".");
  const found =
    extra === undefined
      ? (await cachedConfigurations(scope)).find(
          (configuration) =>
            configuration.id === id &&
            (gatewayName === undefined || configuration.gateway_name === gatewayName),
        )
      : undefined;
  const servesEarlierPayment = found !== undefined && madeThrough?.gateway_configuration_id === found.id;
  if (!found || (found.deleted_at !== null && !servesEarlierPayment)) {
    throw notFound("gateway-configuration", reference);
  }
  if (found.payment_method !== method) {
    throw new ApiError(
      400,
      `request.validation.invalid-${field.replaceAll("_", "-")}`,
      `Gateway configuration ${found.id} is not for ${method === "card" ? "cards" : "native APM payments"}.`,
      [{ name: field, message: `must be a ${method} gateway configuration` }],
    );
  }
  if (!found.enabled && !servesEarlierPayment) {
    throw new ApiError(
      400,
      "request.gateway-configuration.disabled",
      `Gateway configuration ${found.id} is disabled: enable it before paying with it.`,
    );
  }
  return found;
}

/** A configuration's settings, its secret ones opened by the vault for this use only. */
export async function openedSettings(configuration: GatewayConfiguration): Promise<Record<string, string>> {
  const vault = Object.keys(configuration.secrets).length > 0 ? cardVault() : undefined;
  const secrets = await Promise.all(
    Object.entries(configuration.secrets).map(
      async ([name, sealed]) =>
        [
          name,
          await (vault as NonNullable<typeof vault>).open(sealed, {
            projectId: configuration.project_id,
            cardId: configuration.id,
            field: `setting:${name}`,
          }),
        ] as const,
    ),
  );
  return { ...configuration.settings, ...Object.fromEntries(secrets) };
}

/** The connector of a configuration, its secret settings opened for this use only. */
export async function connectorOf(configuration: GatewayConfiguration): Promise<PaymentConnector> {
  return connectGateway(configuration.gateway_name, await openedSettings(configuration), {
    configurationId: configuration.id,
    sandbox: configuration.sandbox,
  });
}
