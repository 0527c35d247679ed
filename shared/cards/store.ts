import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { batchGet } from "../db/batch.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { CheckResults } from "../gateways/connector.ts";
import type { Card, CardSecrets } from "./card.ts";

/**
 * Table access for cards. A card is one item (`keys.resource`, type `card`) holding the card's
 * public fields and its sealed secrets (`number_sealed`, `cvc_sealed`). Usable cards are listed and
 * counted (`GET /cards`); anonymizing one takes it out of the listing and the count.
 *
 * Using a card as a payment source: read it with `findCard` (consistent) and check `isUsable`,
 * then put `cardUsableCheck` (or `cardCheckedWrite`, for the first authorization or verification,
 * which also drops the CVC) in the transaction that records the payment, so a card anonymized
 * meanwhile cannot be charged.
 */
const ENTITY = "card";

/** Not anonymized. The condition of every use of a card. */
const USABLE =
  "#type = :card AND (attribute_not_exists(#anonymized_at) OR attribute_type(#anonymized_at, :null))";
const USABLE_NAMES = { "#type": "type", "#anonymized_at": "anonymized_at" };
const USABLE_VALUES = { ":card": ENTITY, ":null": "NULL" };

function fromItem(item: Record<string, unknown>): { card: Card; secrets: CardSecrets } {
  const { pk, sk, gsi1pk, gsi1sk, type, version, number_sealed, cvc_sealed, ...card } = item;
  return {
    card: card as unknown as Card,
    secrets: {
      number_sealed: (number_sealed ?? null) as CardSecrets["number_sealed"],
      cvc_sealed: (cvc_sealed ?? null) as CardSecrets["cvc_sealed"],
    },
  };
}

export async function insertCard(
  card: Card,
  secrets: CardSecrets,
  alsoWrite: TransactItem[] = [],
): Promise<void> {
  await transactWrite([
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.resource(card.project_id, card.id),
          ...keys.listing(card.project_id, ENTITY, card.id),
          type: ENTITY,
          version: 1,
          ...card,
          ...(secrets.number_sealed ? { number_sealed: secrets.number_sealed } : {}),
          ...(secrets.cvc_sealed ? { cvc_sealed: secrets.cvc_sealed } : {}),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    countChange(card.project_id, ENTITY, 1),
    ...alsoWrite,
  ]);
}

/** A card of the environment, anonymized or not, with its sealed secrets. */
export async function findCard(
  scope: Scope,
  id: string,
): Promise<{ card: Card; secrets: CardSecrets } | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

/** Several cards of one environment in as few round trips as DynamoDB allows (their public fields only), by id. */
export async function findCards(scope: Scope, ids: readonly string[]): Promise<Map<string, Card>> {
  const items = await batchGet(
    ids.map((id) => keys.resource(scope, id)),
    PUBLIC_ATTRIBUTES,
  );
  const found = new Map<string, Card>();
  for (const item of items) {
    if (item.type === ENTITY) {
      const { card } = fromItem(item);
      found.set(card.id, card);
    }
  }
  return found;
}

/** Every attribute of a card but its secrets: presenting cards never reads them. */
const PUBLIC_ATTRIBUTES: readonly (keyof Card | "type")[] = [
  "type",
  "id",
  "project_id",
  "sandbox",
  "scheme",
  "co_scheme",
  "preferred_scheme",
  "card_type",
  "bank_name",
  "brand",
  "category",
  "iin",
  "last_4_digits",
  "exp_month",
  "exp_year",
  "cvc_check",
  "avs_check",
  "name",
  "fingerprint",
  "metadata",
  "created_at",
  "anonymized_at",
];

/** A check, for the transaction that uses the card, that it is still there and not anonymized. */
export function cardUsableCheck(scope: Scope, id: string): TransactItem {
  return {
    ConditionCheck: {
      TableName: config.tableName,
      Key: keys.resource(scope, id),
      ConditionExpression: USABLE,
      ExpressionAttributeNames: USABLE_NAMES,
      ExpressionAttributeValues: USABLE_VALUES,
    },
  };
}

/** What an authorization's outcome tells the card schemes' retry rules (`shared/routing/scheme-rules.ts`). */
export interface CardRetryRecord {
  /** A decline, at this business time. */
  declinedAt?: string;
  /** An approval: the declines counted so far no longer count. */
  approved?: boolean;
  /** A merchant advice code that forbids further attempts. */
  merchantAdviceBlock?: { code: string; at: string };
}

/**
 * Records the CVC and AVS results of an authorization or verification on the card and drops its CVC,
 * which may not outlive that first use (PCI DSS 3.3.1.2), on the condition that the card is usable.
 * A CVC that was not sent leaves the card's `cvc_check` as it is.
 */
export function cardCheckedWrite(
  scope: Scope,
  id: string,
  checks: CheckResults,
  networkTransactionId?: string | null,
  retry?: CardRetryRecord,
): TransactItem {
  const names: Record<string, string> = {
    ...USABLE_NAMES,
    "#avs_check": "avs_check",
    "#cvc_sealed": "cvc_sealed",
  };
  const values: Record<string, unknown> = { ...USABLE_VALUES, ":avs": checks.avs };
  const assignments = ["#avs_check = :avs"];
  if (checks.cvc !== "unavailable") {
    names["#cvc_check"] = "cvc_check";
    values[":cvc"] = checks.cvc;
    assignments.push("#cvc_check = :cvc");
  }
  if (networkTransactionId) {
    // The first customer-initiated payment's id at the card scheme: merchant-initiated ones name it.
    names["#ntid"] = "network_transaction_id";
    values[":ntid"] = networkTransactionId;
    assignments.push("#ntid = if_not_exists(#ntid, :ntid)");
  }
  const removals = ["#cvc_sealed"];
  if (retry?.declinedAt) {
    // The card schemes' retry rules count the declines since the card's last approval.
    names["#declined_at"] = "declined_at";
    values[":declined"] = [retry.declinedAt];
    values[":none"] = [];
    assignments.push("#declined_at = list_append(if_not_exists(#declined_at, :none), :declined)");
  }
  if (retry?.approved) {
    names["#declined_at"] = "declined_at";
    removals.push("#declined_at");
  }
  if (retry?.merchantAdviceBlock) {
    names["#mac"] = "merchant_advice_block";
    values[":mac"] = retry.merchantAdviceBlock;
    assignments.push("#mac = :mac");
  }
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.resource(scope, id),
      UpdateExpression: `SET ${assignments.join(", ")} REMOVE ${removals.join(", ")}`,
      ConditionExpression: USABLE,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Anonymizes a card: drops its sealed number and CVC, its name and metadata, and marks it, keeping
 * what past transactions show (iin, last 4 digits, scheme, expiry, fingerprint). False when there
 * is no such usable card.
 */
export async function anonymizeCard(scope: Scope, id: string, now: Date): Promise<boolean> {
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: keys.resource(scope, id),
          UpdateExpression:
            "SET #anonymized_at = :now, #name = :no_name, #metadata = :no_metadata, #version = #version + :one " +
            "REMOVE #number_sealed, #cvc_sealed, #gsi1pk, #gsi1sk",
          ConditionExpression: USABLE,
          ExpressionAttributeNames: {
            ...USABLE_NAMES,
            "#name": "name",
            "#metadata": "metadata",
            "#version": "version",
            "#number_sealed": "number_sealed",
            "#cvc_sealed": "cvc_sealed",
            "#gsi1pk": "gsi1pk",
            "#gsi1sk": "gsi1sk",
          },
          ExpressionAttributeValues: {
            ...USABLE_VALUES,
            ":now": now.toISOString(),
            ":no_name": null,
            ":no_metadata": {},
            ":one": 1,
          },
        },
      },
      countChange(scope, ENTITY, -1),
    ]);
    return true;
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return false;
    throw error;
  }
}

/** A page of the environment's usable cards, newest first unless asked otherwise (public fields only). */
export async function listCards(scope: Scope, page: PageRequest): Promise<Page<Card>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).card) };
}

/** What `PUT /cards/{id}` changes: a new CVC (sealed; its check pending again), the preferred scheme. */
export interface CardChange {
  cvcSealed?: CardSecrets["cvc_sealed"];
  preferredScheme?: Card["preferred_scheme"];
}

/** Changes a usable card; undefined when there is no such usable card. Returns the card as changed. */
export async function changeCard(
  scope: Scope,
  id: string,
  change: CardChange,
  now: Date,
): Promise<Card | undefined> {
  const set = ["#updated_at = :now", "#version = #version + :one"];
  const names: Record<string, string> = {
    ...USABLE_NAMES,
    "#updated_at": "updated_at",
    "#version": "version",
  };
  const values: Record<string, unknown> = { ...USABLE_VALUES, ":now": now.toISOString(), ":one": 1 };
  if (change.cvcSealed !== undefined) {
    set.push("#cvc_sealed = :cvc_sealed", "#cvc_check = :pending");
    Object.assign(names, { "#cvc_sealed": "cvc_sealed", "#cvc_check": "cvc_check" });
    Object.assign(values, { ":cvc_sealed": change.cvcSealed, ":pending": "pending" });
  }
  if (change.preferredScheme !== undefined) {
    set.push("#preferred_scheme = :preferred_scheme");
    names["#preferred_scheme"] = "preferred_scheme";
    values[":preferred_scheme"] = change.preferredScheme;
  }
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.resource(scope, id),
        UpdateExpression: `SET ${set.join(", ")}`,
        ConditionExpression: USABLE,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: "ALL_NEW",
      }),
    );
    return Attributes ? fromItem(Attributes).card : undefined;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
