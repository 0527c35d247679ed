import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";

/**
 * The item that lets the credential-less 3DS pages find their exchange by its token: written once,
 * with the write that opens the exchange, and never changed. It names the exchange's holder, a
 * payment's transaction or a customer token being verified, whose own item keeps the exchange.
 */
const ENTITY = "challenge";

export type ExchangeHolder =
  | { kind: "transaction"; scope: Scope; transactionId: string }
  | { kind: "token"; scope: Scope; customerId: string; tokenId: string };

export function exchangePut(token: string, holder: ExchangeHolder): TransactItem {
  const names =
    holder.kind === "transaction"
      ? { transaction_id: holder.transactionId }
      : { customer_id: holder.customerId, token_id: holder.tokenId };
  return {
    Put: {
      TableName: config.tableName,
      Item: { ...keys.challenge(token), type: ENTITY, holder: holder.kind, scope: holder.scope, ...names },
      ConditionExpression: "attribute_not_exists(pk)",
    },
  };
}

export async function findExchangeHolder(token: string): Promise<ExchangeHolder | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.challenge(token), ConsistentRead: true }),
  );
  if (Item?.type !== ENTITY) return undefined;
  const scope = String(Item.scope);
  if (Item.holder === "token") {
    return { kind: "token", scope, customerId: String(Item.customer_id), tokenId: String(Item.token_id) };
  }
  return { kind: "transaction", scope, transactionId: String(Item.transaction_id) };
}
