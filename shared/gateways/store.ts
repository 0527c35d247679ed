import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import { type GatewayConfiguration, withDefaults } from "./configuration.ts";

/**
 * Table access for gateway configurations: items of the environment's own partition
 * (`keys.gatewayConfiguration`), so one query reads them all.
 *
 * Payments read them through a per-container cache (`CACHE_MS`): a configuration changed in
 * another container is seen there within that time (this container's own changes at once). The API
 * routes of configurations read them fresh.
 */
const ENTITY = "gateway-configuration";

/** How long a container reuses what it read of an environment's configurations. */
export const CACHE_MS = 10_000;

const cache = new Map<Scope, { until: number; setup: Promise<GatewaySetup> }>();

function item(configuration: GatewayConfiguration) {
  return {
    ...keys.gatewayConfiguration(configuration.project_id, configuration.id),
    type: ENTITY,
    ...configuration,
  };
}

/** The write that stores a new configuration, for the transaction that creates it. */
export function gatewayConfigurationPut(configuration: GatewayConfiguration): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: item(configuration),
      ConditionExpression: "attribute_not_exists(pk)",
    },
  };
}

/**
 * The write that records which environment a configuration belongs to, by its id alone: its
 * provider's webhooks arrive at `/gateway-webhooks/{id}` without credentials.
 */
export function gatewayConfigurationOwnerPut(configuration: GatewayConfiguration): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: {
        ...keys.gatewayConfigurationOwner(configuration.id),
        type: "gateway-configuration-owner",
        scope: configuration.project_id,
      },
      ConditionExpression: "attribute_not_exists(pk)",
    },
  };
}

/** The environment a configuration belongs to, by its id alone; undefined for an unknown id. */
export async function configurationOwner(configurationId: string): Promise<Scope | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.gatewayConfigurationOwner(configurationId) }),
  );
  return typeof Item?.scope === "string" ? Item.scope : undefined;
}

/** The write that replaces a configuration, on the condition that it exists and is not deleted. */
export function gatewayConfigurationReplace(configuration: GatewayConfiguration): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: item(configuration),
      ConditionExpression:
        "attribute_exists(pk) AND (attribute_not_exists(deleted_at) OR attribute_type(deleted_at, :null))",
      ExpressionAttributeValues: { ":null": "NULL" },
    },
  };
}

/**
 * What payments of an environment route by: its configurations (deleted ones included) and its
 * routing rules as stored (`shared/routing/store.ts` reads them), one query of the environment's
 * partition.
 */
export interface GatewaySetup {
  configurations: GatewayConfiguration[];
  /** The routing rules item; undefined before the environment's rules are first set. */
  routing: Record<string, unknown> | undefined;
}

/** The environment's gateway setup, read now. */
export async function readGatewaySetup(scope: Scope): Promise<GatewaySetup> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": scope, ":prefix": keys.gatewaySetupPrefix },
      ConsistentRead: true,
    }),
  );
  const setup: GatewaySetup = {
    configurations: Items.filter((item) => item.type === ENTITY).map(fromItem),
    routing: Items.find((item) => item.sk === keys.routingRules(scope).sk),
  };
  cache.set(scope, { until: Date.now() + CACHE_MS, setup: Promise.resolve(setup) });
  return setup;
}

/** Every configuration of the environment, deleted ones included, read now. */
export async function readConfigurations(scope: Scope): Promise<GatewayConfiguration[]> {
  return (await readGatewaySetup(scope)).configurations;
}

/** The environment's gateway setup as this container last read it (at most `CACHE_MS` ago). */
export function cachedGatewaySetup(scope: Scope): Promise<GatewaySetup> {
  const cached = cache.get(scope);
  if (cached && cached.until > Date.now()) return cached.setup;
  const reading = readGatewaySetup(scope);
  // A failed read is not kept.
  reading.catch(() => cache.delete(scope));
  cache.set(scope, { until: Date.now() + CACHE_MS, setup: reading });
  return reading;
}

/** The environment's configurations as this container last read them (at most `CACHE_MS` ago). */
export async function cachedConfigurations(scope: Scope): Promise<GatewayConfiguration[]> {
  return (await cachedGatewaySetup(scope)).configurations;
}

/** This container changed the environment's configurations or rules: its next read goes to the table. */
export function forgetConfigurations(scope: Scope): void {
  cache.delete(scope);
}

function fromItem(item: Record<string, unknown>): GatewayConfiguration {
  const { pk, sk, type, ...configuration } = item;
  return withDefaults(configuration as unknown as GatewayConfiguration);
}
