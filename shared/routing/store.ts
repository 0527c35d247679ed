import { config } from "../config.ts";
import { keys, type Scope } from "../db/keys.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { GatewaySetup } from "../gateways/store.ts";
import { NO_RULES, type RoutingRules } from "./rules.ts";

/**
 * Table access for routing rules: one item per environment beside its gateway configurations
 * (`keys.routingRules`), so payments read both with one query through the container's cache
 * (`cachedGatewaySetup` in `shared/gateways/store.ts`, 10 s; this container's own changes at once).
 */
const ENTITY = "routing-rules";

/** The rules of a gateway setup as read; the empty document before any are set. */
export function rulesOf(setup: GatewaySetup): RoutingRules {
  const item = setup.routing;
  if (!item) return NO_RULES;
  const { pk, sk, type, ...rules } = item;
  return rules as unknown as RoutingRules;
}

/**
 * Stores `rules` (version `previous + 1`) on the condition that the stored version is still
 * `previous`, with `alsoWrite` (its activity) in the same transaction: false when another change
 * came first.
 */
export async function replaceRules(
  scope: Scope,
  previous: number,
  rules: RoutingRules,
  alsoWrite: TransactItem[],
): Promise<boolean> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: { ...keys.routingRules(scope), type: ENTITY, ...rules },
          ConditionExpression: previous === 0 ? "attribute_not_exists(pk)" : "#version = :previous",
          ...(previous === 0
            ? {}
            : {
                ExpressionAttributeNames: { "#version": "version" },
                ExpressionAttributeValues: { ":previous": previous },
              }),
        },
      },
      ...alsoWrite,
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return false;
    throw error;
  }
}
