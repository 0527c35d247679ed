import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import {
  cancelledItem,
  conditionFailedItem,
  failedConditions,
  type TransactItem,
  transactWrite,
} from "../db/transactions.ts";
import { logger } from "../observability/logger.ts";
import type { Token, TokenThreeDS, VerificationStatus } from "./token.ts";

/**
 * Table access for customer tokens: items of their customer's partition
 * (`keys.child(scope, customerId, "token", tokenId)`), read with the customer in one query
 * (`findCustomerWithTokens`). Every write is conditional on the state it leaves, and every creation
 * and deletion changes the customer item in the same transaction (`tokenAddedWrite`,
 * `tokenRemovedWrite` in the customers store).
 *
 * Verifying a token's card is claimed first (`claimVerification`: pending or failed, and nobody else
 * verifying), so concurrent requests verify a token once; the claim lapses after
 * `VERIFICATION_CLAIM_MS` should its holder die.
 */
const ENTITY = "token";
const KIND = "token";

/** Longer than any function runs (10 s): a claim older than this was abandoned. */
export const VERIFICATION_CLAIM_MS = 30_000;

const tokenKey = (scope: Scope, customerId: string, tokenId: string) =>
  keys.child(scope, customerId, KIND, tokenId);

/** A stored token item as a token, without keys and bookkeeping. */
export function tokenFromItem(item: Record<string, unknown>): Token {
  const { pk, sk, type, version, verifying_owner, verifying_until, ...token } = item;
  return token as unknown as Token;
}

export type WriteRefusal = "customer-not-found" | "too-many-tokens" | "default-changed";

/**
 * Stores a new token with the change of its customer (`customerWrite`, item 0) and, when it comes
 * with a card, the card's check or update (`cardWrite`, item 2), then `alsoWrite` (events, the
 * stored answer), atomically. Refusals of the customer write are told by `refusal`.
 */
export async function insertToken(
  token: Token,
  customerWrite: TransactItem,
  cardWrite: TransactItem | undefined,
  alsoWrite: TransactItem[],
  refusal: (error: unknown, index: number) => WriteRefusal | undefined,
): Promise<"created" | WriteRefusal | "card-unusable"> {
  try {
    await transactWrite([
      customerWrite,
      {
        Put: {
          TableName: config.tableName,
          Item: {
            ...tokenKey(token.project_id, token.customer_id, token.id),
            type: ENTITY,
            version: 1,
            ...token,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      ...(cardWrite ? [cardWrite] : []),
      ...alsoWrite,
      // Which customer the token belongs to, for the routes that name a token alone (`findTokenById`).
      {
        Put: {
          TableName: config.tableName,
          Item: { ...keys.resource(token.project_id, token.id), type: OWNER, customer_id: token.customer_id },
        },
      },
    ]);
    return "created";
  } catch (error) {
    const refused = refusal(error, 0);
    if (refused) return refused;
    if (cardWrite && failedConditions(error)?.includes(2)) return "card-unusable";
    throw error;
  }
}

/** The deletion of a token, for a transaction (the customer's deletion deletes its tokens). */
export function tokenDelete(scope: Scope, customerId: string, tokenId: string): TransactItem {
  return {
    Delete: {
      TableName: config.tableName,
      Key: tokenKey(scope, customerId, tokenId),
      ConditionExpression: "#type = :token",
      ExpressionAttributeNames: { "#type": "type" },
      ExpressionAttributeValues: { ":token": ENTITY },
    },
  };
}

/** Deletes a token with the change of its customer (item 1) and `alsoWrite` (its event), atomically. */
export async function deleteToken(
  token: Token,
  customerWrite: TransactItem,
  alsoWrite: TransactItem[],
  refusal: (error: unknown, index: number) => WriteRefusal | undefined,
): Promise<"deleted" | "token-not-found" | WriteRefusal> {
  try {
    await transactWrite([
      tokenDelete(token.project_id, token.customer_id, token.id),
      customerWrite,
      ...alsoWrite,
    ]);
    return "deleted";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "token-not-found";
    const refused = refusal(error, 1);
    if (refused) return refused;
    throw error;
  }
}

/** The fields of a token a request changes, with their new values. */
export type TokenChanges = Partial<
  Pick<Token, "metadata" | "description" | "return_url" | "cancel_url" | "webhook_url">
>;

function assignments(
  changes: Record<string, unknown>,
  names: Record<string, string>,
  values: Record<string, unknown>,
) {
  return Object.entries(changes).map(([field, value]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    return `#${field} = :${field}`;
  });
}

/** Changes a token's fields, with `customerWrite` (making it the default) when given, atomically. */
export async function updateToken(
  scope: Scope,
  customerId: string,
  tokenId: string,
  changes: TokenChanges,
  now: Date,
  customerWrite: TransactItem | undefined,
  refusal: (error: unknown, index: number) => WriteRefusal | undefined,
): Promise<"updated" | "token-not-found" | WriteRefusal> {
  const names: Record<string, string> = {
    "#type": "type",
    "#version": "version",
    "#updated_at": "updated_at",
  };
  const values: Record<string, unknown> = { ":token": ENTITY, ":one": 1, ":now": now.toISOString() };
  const set = ["#version = #version + :one", "#updated_at = :now", ...assignments(changes, names, values)];
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: tokenKey(scope, customerId, tokenId),
          UpdateExpression: `SET ${set.join(", ")}`,
          ConditionExpression: "#type = :token",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      ...(customerWrite ? [customerWrite] : []),
    ]);
    return "updated";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "token-not-found";
    const refused = refusal(error, 1);
    if (refused) return refused;
    throw error;
  }
}

export type ClaimRefusal =
  | { refused: "token-not-found" }
  | { refused: "has-source"; status: VerificationStatus; token: Token }
  | { refused: "in-progress" };

/**
 * Claims the verification of a token that awaits a source (pending, or failed before): nobody
 * else may verify it until the claim is completed, released, or lapses. Returns the token.
 */
export async function claimVerification(
  scope: Scope,
  customerId: string,
  tokenId: string,
  owner: string,
  now: Date,
): Promise<{ claimed: Token } | ClaimRefusal> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: tokenKey(scope, customerId, tokenId),
        UpdateExpression: "SET #owner = :owner, #until = :until, #version = #version + :one",
        ConditionExpression:
          "#type = :token AND #status IN (:pending, :failed) AND (attribute_not_exists(#until) OR #until < :now)",
        ExpressionAttributeNames: {
          "#type": "type",
          "#status": "verification_status",
          "#owner": "verifying_owner",
          "#until": "verifying_until",
          "#version": "version",
        },
        ExpressionAttributeValues: {
          ":token": ENTITY,
          ":pending": "pending",
          ":failed": "failed",
          ":owner": owner,
          ":until": now.getTime() + VERIFICATION_CLAIM_MS,
          ":now": now.getTime(),
          ":one": 1,
        },
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { claimed: tokenFromItem(Attributes ?? {}) };
  } catch (error) {
    const found = conditionFailedItem(error);
    if (found === null) throw error;
    if (found?.type !== ENTITY) return { refused: "token-not-found" };
    const status = found.verification_status as VerificationStatus;
    if (status !== "pending" && status !== "failed")
      return { refused: "has-source", status, token: tokenFromItem(found) };
    return { refused: "in-progress" };
  }
}

/**
 * Records the outcome of a claimed verification: the token's status, card and configuration (and
 * the request's other changes), with `cardWrite` (the card's check results, its CVC dropped) and
 * `customerWrite` when given, on the condition that the claim is still `owner`'s.
 */
export async function completeVerification(
  token: Pick<Token, "project_id" | "customer_id" | "id">,
  outcome: {
    status: VerificationStatus;
    cardId: string;
    gatewayConfigurationId: string;
    /** The verification's 3DS exchange, ended, when it had one. */
    threeDS: TokenThreeDS | null;
  },
  changes: TokenChanges,
  owner: string,
  now: Date,
  cardWrite: TransactItem,
  customerWrite: TransactItem | undefined,
  refusal: (error: unknown, index: number) => WriteRefusal | undefined,
): Promise<"completed" | "claim-lost" | "token-not-found" | "card-unusable" | WriteRefusal> {
  const names: Record<string, string> = {
    "#type": "type",
    "#version": "version",
    "#owner": "verifying_owner",
    "#until": "verifying_until",
    "#updated_at": "updated_at",
    "#status": "verification_status",
    "#card_id": "card_id",
    "#configuration": "gateway_configuration_id",
  };
  const values: Record<string, unknown> = {
    ":token": ENTITY,
    ":one": 1,
    ":owner": owner,
    ":now": now.toISOString(),
    ":status": outcome.status,
    ":card_id": outcome.cardId,
    ":configuration": outcome.gatewayConfigurationId,
  };
  const set = [
    "#version = #version + :one",
    "#updated_at = :now",
    "#status = :status",
    "#card_id = :card_id",
    "#configuration = :configuration",
    ...assignments({ ...changes, three_d_s: outcome.threeDS }, names, values),
  ];
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: tokenKey(token.project_id, token.customer_id, token.id),
          UpdateExpression: `SET ${set.join(", ")} REMOVE #owner, #until`,
          ConditionExpression: "#type = :token AND #owner = :owner",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      cardWrite,
      ...(customerWrite ? [customerWrite] : []),
    ]);
    return "completed";
  } catch (error) {
    const failed = failedConditions(error) ?? [];
    if (failed.includes(0))
      return cancelledItem(error, 0)?.type === ENTITY ? "claim-lost" : "token-not-found";
    if (failed.includes(1)) return "card-unusable";
    const refused = customerWrite ? refusal(error, 2) : undefined;
    if (refused) return refused;
    throw error;
  }
}

/**
 * A claimed verification waits for the cardholder: the token keeps its exchange (`threeDS`, the
 * round just asked) and the claim is given up, on the condition that it is still `owner`'s, with
 * `alsoWrite` (the exchange's page item when it opens). The token stays `pending`.
 */
export async function awaitCardholder(
  token: Pick<Token, "project_id" | "customer_id" | "id">,
  threeDS: TokenThreeDS,
  owner: string,
  now: Date,
  alsoWrite: TransactItem[],
): Promise<"waiting" | "claim-lost"> {
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: tokenKey(token.project_id, token.customer_id, token.id),
          UpdateExpression:
            "SET #three_d_s = :three_d_s, #version = #version + :one, #updated_at = :now REMOVE #owner, #until",
          ConditionExpression: "#type = :token AND #owner = :owner",
          ExpressionAttributeNames: {
            "#type": "type",
            "#three_d_s": "three_d_s",
            "#version": "version",
            "#updated_at": "updated_at",
            "#owner": "verifying_owner",
            "#until": "verifying_until",
          },
          ExpressionAttributeValues: {
            ":token": ENTITY,
            ":three_d_s": threeDS,
            ":one": 1,
            ":now": now.toISOString(),
            ":owner": owner,
          },
        },
      },
      ...alsoWrite,
    ]);
    return "waiting";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "claim-lost";
    throw error;
  }
}

/**
 * Records the answer to the open round of a token's exchange (the challenge page's), on the version
 * read while it was open and only while nobody verifies the token: once, and never under a
 * verification in flight.
 */
export async function recordTokenAnswer(
  token: Pick<Token, "project_id" | "customer_id" | "id">,
  threeDS: TokenThreeDS,
  version: number,
  now: Date,
): Promise<boolean> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: tokenKey(token.project_id, token.customer_id, token.id),
        UpdateExpression: "SET #three_d_s = :three_d_s, #version = #version + :one",
        ConditionExpression:
          "#type = :token AND #version = :version AND (attribute_not_exists(#until) OR #until < :now)",
        ExpressionAttributeNames: {
          "#type": "type",
          "#three_d_s": "three_d_s",
          "#version": "version",
          "#until": "verifying_until",
        },
        ExpressionAttributeValues: {
          ":token": ENTITY,
          ":three_d_s": threeDS,
          ":one": 1,
          ":version": version,
          ":now": now.getTime(),
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** A token item with its version, consistently read; undefined when absent. */
const OWNER = "token-owner";

/**
 * A token named by its id alone (`GET /balances/tokens/{id}`): its customer is found from the item
 * its creation wrote beside it; a token deleted since is not found.
 */
export async function findTokenById(scope: Scope, tokenId: string): Promise<Token | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, tokenId), ConsistentRead: true }),
  );
  if (Item?.type !== OWNER) return undefined;
  return (await findVersionedToken(scope, String(Item.customer_id), tokenId))?.token;
}

export async function findVersionedToken(
  scope: Scope,
  customerId: string,
  tokenId: string,
): Promise<{ token: Token; version: number } | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: tokenKey(scope, customerId, tokenId),
      ConsistentRead: true,
    }),
  );
  if (Item?.type !== ENTITY) return undefined;
  return { token: tokenFromItem(Item), version: Number(Item.version) };
}

/** Gives a claim up (the verification could not run); if this fails, the claim lapses on its own. */
export async function releaseVerification(scope: Scope, customerId: string, tokenId: string, owner: string) {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: tokenKey(scope, customerId, tokenId),
        UpdateExpression: "REMOVE #owner, #until",
        ConditionExpression: "#owner = :owner",
        ExpressionAttributeNames: { "#owner": "verifying_owner", "#until": "verifying_until" },
        ExpressionAttributeValues: { ":owner": owner },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) {
      logger.warn("Could not release a token verification claim; it lapses on its own", { error });
    }
  }
}
