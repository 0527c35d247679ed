import { config } from "../config.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import { isId, isSandboxProjectId, newId } from "../ids.ts";

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
/** The type of the items that file an event under what it is about (`keys.eventSubject`). */
export const EVENT_SUBJECT = "event-subject";

/** The kinds of object an event is filed under, when its `data` carries one (`data.transaction.id`). */
export const EVENT_SUBJECT_KINDS = ["transaction", "invoice"] as const;
export type EventSubjectKind = (typeof EVENT_SUBJECT_KINDS)[number];

/** The ids of the transaction and invoice an event's `data` is about (none, one or both). */
export function eventSubjects(data: Record<string, unknown>): string[] {
  return EVENT_SUBJECT_KINDS.flatMap((kind) => {
    const object = data[kind];
    const id = object && typeof object === "object" ? (object as { id?: unknown }).id : undefined;
    return typeof id === "string" && isId(kind, id) ? [id] : [];
  });
}

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
 * The writes that record several events of one change: one item each, one small item per
 * transaction or invoice each is about (`keys.eventSubject`: `GET /events?transaction_id=`), and one
 * count change for them all (a transaction may not touch a counter shard twice).
 */
export function eventWrites(scope: Scope, events: readonly PendingEvent[], now: Date): TransactItem[] {
  if (events.length === 0) return [];
  const puts = events.map(({ name, data }): TransactItem[] => {
    const event: EventRecord = {
      id: newId("event"),
      project_id: scope,
      name,
      sandbox: isSandboxProjectId(scope),
      data,
      fired_at: now.toISOString(),
    };
    const put: TransactItem = {
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
    const subjects = eventSubjects(data).map(
      (subjectId): TransactItem => ({
        Put: {
          TableName: config.tableName,
          Item: {
            ...keys.eventSubject(scope, subjectId, event.id),
            type: EVENT_SUBJECT,
            event_id: event.id,
            subject_id: subjectId,
          },
        },
      }),
    );
    return [put, ...subjects];
  });
  return [...puts.flat(), countChange(scope, ENTITY, events.length)];
}
