import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { cancelledItem, failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Invoice, SettableField } from "./invoice.ts";

/**
 * Table access for invoices. An invoice is one item (`keys.resource`), listed through the listing
 * index and counted. Every change is conditional: on the invoice being there, on no payment having
 * been attempted (`transaction_id` still null), and for an update on the version it was read at.
 * The resources an invoice links to are checked in the same transaction as the invoice write.
 */
const ENTITY = "invoice";
/** Customer tokens are items of their customer's partition (`keys.child(…, "token", id)`). */
const TOKEN_KIND = "token";

/** Item attributes that are keys or bookkeeping, not part of the resource. */
function fromItem<T>(item: Record<string, unknown>): T {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...resource } = item;
  return resource as T;
}

/** The links an invoice write must find in place, in the same transaction. */
export interface LinkChecks {
  customerId?: string;
  /** A token of the invoice's customer. */
  token?: { customerId: string; tokenId: string };
}

export type MissingLink = { missing: "customer" | "token" };

/** The version of an invoice item, the condition of the next update. */
export interface Versioned {
  invoice: Invoice;
  version: number;
}

function linkChecks(
  scope: Scope,
  links: LinkChecks,
): { items: TransactItem[]; names: MissingLink["missing"][] } {
  const items: TransactItem[] = [];
  const names: MissingLink["missing"][] = [];
  if (links.customerId !== undefined) {
    items.push({
      ConditionCheck: {
        TableName: config.tableName,
        Key: keys.resource(scope, links.customerId),
        ConditionExpression: "#type = :customer",
        ExpressionAttributeNames: { "#type": "type" },
        ExpressionAttributeValues: { ":customer": "customer" },
      },
    });
    names.push("customer");
  }
  if (links.token !== undefined) {
    items.push({
      ConditionCheck: {
        TableName: config.tableName,
        Key: keys.child(scope, links.token.customerId, TOKEN_KIND, links.token.tokenId),
        ConditionExpression: "attribute_exists(pk)",
      },
    });
    names.push("token");
  }
  return { items, names };
}

/** Which link check of a cancelled transaction failed, the checks starting at item `first`. */
function missingLink(
  error: unknown,
  first: number,
  names: MissingLink["missing"][],
): MissingLink | undefined {
  const failed = failedConditions(error) ?? [];
  const name = names.find((_, offset) => failed.includes(first + offset));
  return name ? { missing: name } : undefined;
}

/** Never paid: no transaction was attached to the invoice yet. */
const NO_PAYMENT_ATTEMPTED =
  "(attribute_not_exists(#transaction_id) OR attribute_type(#transaction_id, :null))";

export async function insertInvoice(
  invoice: Invoice,
  links: LinkChecks,
  alsoWrite: TransactItem[] = [],
): Promise<"created" | MissingLink> {
  const scope = invoice.project_id;
  const checks = linkChecks(scope, links);
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: {
            ...keys.resource(scope, invoice.id),
            ...keys.listing(scope, ENTITY, invoice.id),
            type: ENTITY,
            version: 1,
            ...invoice,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      countChange(scope, ENTITY, 1),
      ...checks.items,
      ...alsoWrite,
    ]);
    return "created";
  } catch (error) {
    const missing = missingLink(error, 2, checks.names);
    if (missing) return missing;
    throw error;
  }
}

/** An invoice item as read from the table (`batchGet`), as an invoice. */
export const invoiceFromItem = (item: Record<string, unknown>): Invoice => fromItem<Invoice>(item);

export async function findInvoice(scope: Scope, id: string): Promise<Versioned | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  if (Item?.type !== ENTITY) return undefined;
  return { invoice: fromItem<Invoice>(Item), version: Number(Item.version) };
}

/** Why a conditional change of an invoice was refused, read from the item the condition found. */
type Refusal = "not-found" | "payment-attempted" | "changed";

function refusal(found: Record<string, unknown> | undefined): Refusal {
  if (found?.type !== ENTITY) return "not-found";
  if (found.transaction_id !== undefined && found.transaction_id !== null) return "payment-attempted";
  return "changed";
}

/**
 * Writes the changed fields of an invoice read at `version`, if it is still at that version and
 * still unpaid, with the link checks in the same transaction.
 */
export async function updateInvoice(
  current: Versioned,
  changes: Partial<Pick<Invoice, SettableField>>,
  links: LinkChecks,
): Promise<"updated" | Refusal | MissingLink> {
  const { invoice, version } = current;
  const names: Record<string, string> = {
    "#type": "type",
    "#version": "version",
    "#transaction_id": "transaction_id",
  };
  const values: Record<string, unknown> = {
    ":invoice": ENTITY,
    ":version": version,
    ":next": version + 1,
    ":null": "NULL",
  };
  const assignments = ["#version = :next"];
  for (const [field, value] of Object.entries(changes)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    assignments.push(`#${field} = :${field}`);
  }
  const checks = linkChecks(invoice.project_id, links);
  try {
    await transactWrite([
      {
        Update: {
          TableName: config.tableName,
          Key: keys.resource(invoice.project_id, invoice.id),
          UpdateExpression: `SET ${assignments.join(", ")}`,
          ConditionExpression: `#type = :invoice AND #version = :version AND ${NO_PAYMENT_ATTEMPTED}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      ...checks.items,
    ]);
    return "updated";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return refusal(cancelledItem(error, 0));
    const missing = missingLink(error, 1, checks.names);
    if (missing) return missing;
    throw error;
  }
}

/** Deletes an unpaid invoice and counts it out, atomically. */
export async function deleteInvoice(scope: Scope, id: string): Promise<"deleted" | Refusal> {
  try {
    await transactWrite([
      {
        Delete: {
          TableName: config.tableName,
          Key: keys.resource(scope, id),
          ConditionExpression: `#type = :invoice AND ${NO_PAYMENT_ATTEMPTED}`,
          ExpressionAttributeNames: { "#type": "type", "#transaction_id": "transaction_id" },
          ExpressionAttributeValues: { ":invoice": ENTITY, ":null": "NULL" },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        },
      },
      countChange(scope, ENTITY, -1),
    ]);
    return "deleted";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return refusal(cancelledItem(error, 0));
    throw error;
  }
}

export async function listInvoices(scope: Scope, page: PageRequest): Promise<Page<Invoice>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((item) => fromItem<Invoice>(item)) };
}
