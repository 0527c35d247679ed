import { config } from "../config.ts";
import { countChange } from "../db/counters.ts";
import { keys } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import type { AuthenticatedCaller, Caller } from "../http/auth.ts";
import { newId } from "../ids.ts";

/**
 * The activity log of an environment: who changed its setup, what, when, and with which credential.
 * Payments and customers have their events (`shared/events`); the log is for what changes how the
 * environment works: its settings, gateway configurations, routing rules, export layouts and
 * delivery settings, products, coupons, supervised projects, certificates. An entry is written in
 * the same transaction as its change (`activityWrite`), so the log holds every committed change and
 * nothing else. It is the log `GET /activities` answers and the dashboard shows.
 */
export type ActivityType =
  | "project.updated"
  | "project.deleted"
  | "gateway_configuration.created"
  | "gateway_configuration.updated"
  | "gateway_configuration.deleted"
  | "routing_rules.replaced"
  | "supervised_project.created"
  | "applepay_certificate.created"
  | "applepay_certificate.activated"
  | "applepay_certificate.deleted"
  | "sftp_settings.updated"
  | "sftp_settings.deleted"
  | "export_layout.created"
  | "export_layout.updated"
  | "export_layout.deleted"
  | "product.created"
  | "product.updated"
  | "product.deleted"
  | "coupon.created"
  | "coupon.updated"
  | "coupon.deleted"
  | "api_key.created"
  | "api_key.rolled"
  | "api_key.revoked";

/** Who made a change: the credential and where the request came from (`system` for the service's own jobs). */
export interface Actor {
  credential: "private-key" | "public-key" | "supervisor-key" | "dashboard" | "system";
  /** The person, when the change was made through the dashboard. */
  user: { id: string; email: string; role: string } | null;
  request_id: string | null;
  ip_address: string | null;
  user_agent: string | null;
}

export interface Activity {
  id: string;
  project_id: string;
  sandbox: boolean;
  type: ActivityType;
  /** One line a person reads: "Webhook URL set to https://…". */
  title: string;
  /** What was changed. */
  subject: { type: string; id: string } | null;
  actor: Actor;
  created_at: string;
}

export const ACTIVITY_ENTITY = "activity";

function actorOf(caller: Caller | AuthenticatedCaller): Actor {
  const authenticated = "credential" in caller ? caller : undefined;
  return {
    credential: authenticated?.credential ?? "system",
    user: authenticated?.user ?? null,
    request_id: authenticated?.origin?.requestId ?? null,
    ip_address: authenticated?.origin?.sourceIp ?? null,
    user_agent: authenticated?.origin?.userAgent?.slice(0, 256) ?? null,
  };
}

/** The writes that log one change, for the transaction that makes it. */
export function activityWrite(
  caller: Caller | AuthenticatedCaller,
  type: ActivityType,
  title: string,
  subject: Activity["subject"],
  now: Date,
): TransactItem[] {
  const activity: Activity = {
    id: newId("activity"),
    project_id: caller.projectId,
    sandbox: caller.sandbox,
    type,
    title: title.slice(0, 500),
    subject,
    actor: actorOf(caller),
    created_at: now.toISOString(),
  };
  return [
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.resource(caller.projectId, activity.id),
          ...keys.listing(caller.projectId, ACTIVITY_ENTITY, activity.id),
          ...activity,
          // The item's `type` tells what the item is (as every item's); the activity's own is kept beside it.
          type: ACTIVITY_ENTITY,
          activity_type: activity.type,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    countChange(caller.projectId, ACTIVITY_ENTITY, 1),
  ];
}

/** An activity as the API shows it (`GET /activities`). */
export function presentActivity(activity: Activity) {
  return {
    id: activity.id,
    project_id: activity.project_id,
    sandbox: activity.sandbox,
    type: activity.type,
    title: activity.title,
    subject: activity.subject,
    // Entries from before the dashboard name no person.
    actor: { ...activity.actor, user: activity.actor.user ?? null },
    created_at: activity.created_at,
  };
}

export type PresentedActivity = ReturnType<typeof presentActivity>;
