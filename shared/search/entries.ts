import { createHash } from "node:crypto";
import { config } from "../config.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";

/**
 * The search entries of the single table (`keys.searchCardLast4`, `keys.searchEmail`): small items
 * written in the very transaction that sets what they index, so a search never sees a payment or a
 * customer before or without its entry, and no write takes one more round trip. Each entry's key is
 * a function of the value and the object's id alone: a replayed or recovered write puts the same
 * item again, never a second one.
 */
export const SEARCH_ENTRY = "search-entry";

/** An email as searched: trimmed and in lower case (`Ada@Example.com ` finds `ada@example.com`). */
export function normalizedEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The key part of an email: a hash of its normalized form, so no address is ever part of a key. */
export function emailHash(email: string): string {
  return createHash("sha256").update(normalizedEmail(email)).digest("hex");
}

/**
 * The entry that finds a transaction by the last four digits of the card it is paid with. It keeps
 * the card's id: a transaction that moved to another card (an authentication started over) leaves
 * an entry that no longer matches, and the search leaves it out.
 */
export function cardEntryWrites(
  record: { project_id: string; id: string; card_id: string | null },
  card: { last_4_digits: string },
): TransactItem[] {
  if (!record.card_id || !/^\d{4}$/.test(card.last_4_digits)) return [];
  return [
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.searchCardLast4(record.project_id, card.last_4_digits, record.id),
          type: SEARCH_ENTRY,
          transaction_id: record.id,
          card_id: record.card_id,
        },
      },
    },
  ];
}

function emailPut(scope: Scope, customerId: string, email: string): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: {
        ...keys.searchEmail(scope, emailHash(email), customerId),
        type: SEARCH_ENTRY,
        customer_id: customerId,
      },
    },
  };
}

function emailDelete(scope: Scope, customerId: string, email: string): TransactItem {
  return {
    Delete: { TableName: config.tableName, Key: keys.searchEmail(scope, emailHash(email), customerId) },
  };
}

/**
 * The entry changes that go with a customer's email moving from `before` to `after` (null: none):
 * the old entry removed and the new one put; nothing when both normalize alike (a change of case).
 */
export function emailEntryWrites(
  customer: { project_id: string; id: string },
  before: string | null,
  after: string | null,
): TransactItem[] {
  const from = before ? normalizedEmail(before) : "";
  const to = after ? normalizedEmail(after) : "";
  if (from === to) return [];
  return [
    ...(from ? [emailDelete(customer.project_id, customer.id, from)] : []),
    ...(to ? [emailPut(customer.project_id, customer.id, to)] : []),
  ];
}
