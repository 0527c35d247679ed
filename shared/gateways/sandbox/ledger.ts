import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../../config.ts";
import { dynamo } from "../../db/client.ts";
import { keys, type Scope } from "../../db/keys.ts";
import { conditionFailedItem } from "../../db/transactions.ts";
import type { OperationKind, RecordedOutcome } from "../connector.ts";

/**
 * What the sandbox gateway remembers, as a real provider does on its side:
 * - every operation under its reference: the first answer is kept, and a repeated reference gets it
 *   again (providers' idempotency), which is also what `lookup` reads;
 * - the increments of an authorization (a test card fails the capture of an incremented one);
 * - the first request made with a card (test cards that accept only their first request).
 *
 * Kept in the service's table, in the environment's own partitions, for as long as an operation
 * can be looked up (`KEEP_FOR_SECONDS`).
 */
export interface SandboxLedger {
  /** Keeps `outcome` as the answer to `reference` unless one is kept; returns the kept answer. */
  record(
    scope: Scope,
    kind: OperationKind,
    reference: string,
    outcome: RecordedOutcome,
  ): Promise<RecordedOutcome>;
  find(scope: Scope, reference: string): Promise<RecordedOutcome | undefined>;
  /** Notes an approved increment of the authorization made under `authorization`. */
  recordIncrement(scope: Scope, authorization: string, reference: string): Promise<void>;
  wasIncremented(scope: Scope, authorization: string): Promise<boolean>;
  /** The reference of the first request made with the card; `reference` when it is the first. */
  firstUseOfCard(scope: Scope, fingerprint: string, reference: string): Promise<string>;
}

/** Beyond the capture window and any recovery: an operation older than this is never looked up. */
export const KEEP_FOR_SECONDS = 90 * 24 * 3600;

const expiresAt = () => Math.floor(Date.now() / 1000) + KEEP_FOR_SECONDS;

export const tableLedger: SandboxLedger = {
  async record(scope, kind, reference, outcome) {
    try {
      await dynamo.send(
        new PutCommand({
          TableName: config.tableName,
          Item: {
            ...keys.sandboxOperation(scope, reference),
            type: "sandbox-operation",
            kind,
            outcome,
            expires_at: expiresAt(),
          },
          ConditionExpression: "attribute_not_exists(pk)",
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      );
      return outcome;
    } catch (error) {
      const kept = conditionFailedItem(error);
      if (!kept) throw error;
      // A repeat of the reference: the provider answers what it answered the first time.
      return kept.outcome as RecordedOutcome;
    }
  },

  async find(scope, reference) {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: config.tableName,
        Key: keys.sandboxOperation(scope, reference),
        ConsistentRead: true,
      }),
    );
    return Item?.type === "sandbox-operation" ? (Item.outcome as RecordedOutcome) : undefined;
  },

  async recordIncrement(scope, authorization, reference) {
    await dynamo.send(
      new PutCommand({
        TableName: config.tableName,
        Item: {
          ...keys.sandboxIncrement(scope, authorization, reference),
          type: "sandbox-increment",
          expires_at: expiresAt(),
        },
      }),
    );
  },

  async wasIncremented(scope, authorization) {
    const { pk } = keys.sandboxIncrement(scope, authorization, "");
    const { Items = [] } = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": pk, ":prefix": keys.sandboxIncrementPrefix },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return Items.length > 0;
  },

  async firstUseOfCard(scope, fingerprint, reference) {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.sandboxCard(scope, fingerprint),
        UpdateExpression:
          "SET #first = if_not_exists(#first, :reference), #type = :type, #expires = :expires",
        ExpressionAttributeNames: { "#first": "first_reference", "#type": "type", "#expires": "expires_at" },
        ExpressionAttributeValues: {
          ":reference": reference,
          ":type": "sandbox-card",
          ":expires": expiresAt(),
        },
        ReturnValues: "ALL_NEW",
      }),
    );
    return String(Attributes?.first_reference ?? reference);
  },
};
