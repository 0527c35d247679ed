import { config } from "../config.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import { isSandboxProjectId, newId } from "../ids.ts";

/**
 * The events outbox. A state change records its events in the SAME transaction as the change
 * (`eventWrite` returns the writes to add to it), so an event exists if and only if its change
 * committed; delivery is driven from the committed items (the table's stream).
 *
 * An event is a top-level resource of its environment (`keys.resource`, type `event`), listed through
 * the listing index (entity `event`) and counted like every listed entity:
 * `{ id: "ev_…", project_id, name, sandbox, data, fired_at }`, where `data` holds the resources the
 * event is about as the API presents them (`{ token: {...} }`, `{ customer: {...} }`).
 */
export type EventName =
  | "customer.created"
  | "customer.updated"
  | "customer.deleted"
  | "customer.token.created"
  | "customer.token.deleted"
  | "transaction.authorized"
  | "transaction.captured"
  | "transaction.failed"
  | "transaction.voided"
  | "transaction.refunded"
  | "transaction.refund_failed"
  | "transaction.paid_out"
  | "invoice.completed"
  | "invoice.pending"
  | "plan.created"
  | "plan.updated"
  | "plan.deleted"
  | "coupon.created"
  | "coupon.updated"
  | "coupon.deleted"
  | "product.created"
  | "product.updated"
  | "product.deleted"
  | "payout.created"
  | "payout.deleted"
  | "subscription.created"
  | "subscription.started"
  | "subscription.iterated"
  | "subscription.payment_failed"
  | "subscription.trial.ending_soon"
  | "subscription.trial.ended"
  | "subscription.updated"
  | "subscription.addon.created"
  | "subscription.addon.updated"
  | "subscription.addon.deleted"
  | "subscription.discount.created"
  | "subscription.discount.deleted"
  | "subscription.canceled";

export interface EventRecord {
  id: string;
  project_id: string;
  name: EventName;
  sandbox: boolean;
  data: Record<string, unknown>;
  fired_at: string;
}

const ENTITY = "event";

export interface PendingEvent {
  name: EventName;
  data: Record<string, unknown>;
}

/** The writes that record one event, for the transaction of the change that causes it. */
export function eventWrite(
  scope: Scope,
  name: EventName,
  data: Record<string, unknown>,
  now: Date,
): TransactItem[] {
  return eventWrites(scope, [{ name, data }], now);
}

/**
 * The writes that record several events of one change: one item each, and one count change for
 * them all (a transaction may not touch a counter shard twice).
 */
export function eventWrites(scope: Scope, events: readonly PendingEvent[], now: Date): TransactItem[] {
  if (events.length === 0) return [];
  const puts = events.map(({ name, data }): TransactItem => {
    const event: EventRecord = {
      id: newId("event"),
      project_id: scope,
      name,
      sandbox: isSandboxProjectId(scope),
      data,
      fired_at: now.toISOString(),
    };
    return {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.resource(scope, event.id),
          ...keys.listing(scope, ENTITY, event.id),
          type: ENTITY,
          ...event,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    };
  });
  return [...puts, countChange(scope, ENTITY, events.length)];
}
