import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import { ApiError } from "../http/errors.ts";
import type { GatewayConfiguration } from "./configuration.ts";

/** Table access for gateway configurations: items of the environment's partition. */
const ENTITY = "gateway-configuration";

/** The write that stores a new configuration, for the transaction that creates it. */
export function gatewayConfigurationPut(configuration: GatewayConfiguration): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: {
        ...keys.gatewayConfiguration(configuration.project_id, configuration.id),
        type: ENTITY,
        ...configuration,
      },
      ConditionExpression: "attribute_not_exists(pk)",
    },
  };
}

/** The configuration card operations of the environment go through: its first enabled one for cards. */
export async function cardGatewayConfiguration(scope: Scope): Promise<GatewayConfiguration> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": scope, ":prefix": keys.gatewayConfigurationPrefix },
      ConsistentRead: true,
    }),
  );
  const found = Items.map(fromItem).find(
    (configuration) => configuration.enabled && configuration.payment_method === "card",
  );
  if (!found) {
    throw new ApiError(400, "gateway.not-configured", "No card gateway is configured for this project.");
  }
  return found;
}

function fromItem(item: Record<string, unknown>): GatewayConfiguration {
  const { pk, sk, type, ...configuration } = item;
  return configuration as unknown as GatewayConfiguration;
}
