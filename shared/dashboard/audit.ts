import { PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { invalidField } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { dashboardKeys } from "./keys.ts";
import type { Role } from "./roles.ts";

/**
 * A project's audit log: every change made through the dashboard (who, what, when, from where,
 * and its outcome), sign-ins and their failures, sign-outs, invitations, role changes and factor
 * enrolments. A change is recorded before it runs (`outcome: "started"`) and its outcome after, so
 * no change can happen unaudited: if the entry cannot be written, the change is not made. Owners
 * read it (`GET /dashboard/audit-log`), newest first.
 */
export interface AuditActor {
  user_id: string | null;
  email: string | null;
  role: Role | null;
}

export interface AuditEntry {
  id: string;
  project_id: string;
  actor: AuditActor;
  /** `api.request` (a route of the API), or the dashboard's own: `sign_in.succeeded`, `user.invited`, … */
  action: string;
  /** The route key (`POST /invoices/{invoice_id}/refunds`), the method and path requested. */
  route: string | null;
  method: string | null;
  path: string | null;
  /** The environment the request addressed (`proj_…`, `test-proj_…`), if any. */
  environment: string | null;
  subject: { type: string; id: string } | null;
  ip_address: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** `started` until the change answered; then its HTTP status. */
  outcome: "started" | "succeeded" | "failed";
  status: number | null;
  detail: string | null;
  created_at: string;
  completed_at: string | null;
}

export const AUDIT_TYPE = "dashboard_audit";

/** What a request tells the log about itself. */
export function requestFacts(event: APIGatewayProxyEventV2) {
  return {
    route: event.routeKey ?? null,
    method: event.requestContext?.http?.method ?? null,
    path: event.rawPath?.slice(0, 512) ?? null,
    ip_address: event.requestContext?.http?.sourceIp ?? null,
    user_agent: event.headers?.["user-agent"]?.slice(0, 256) ?? null,
    request_id: event.requestContext?.requestId ?? null,
  };
}

/** The first path parameter, as what a change is about (`invoice_id` → `{type: "invoice", id}`). */
export function subjectOf(event: APIGatewayProxyEventV2): AuditEntry["subject"] {
  const [name, id] = Object.entries(event.pathParameters ?? {})[0] ?? [];
  if (!name || !id) return null;
  return { type: name.replace(/_id$/, ""), id: id.slice(0, 200) };
}

export type NewAuditEntry = Omit<AuditEntry, "id" | "created_at" | "completed_at" | "status" | "outcome"> & {
  outcome?: AuditEntry["outcome"];
  status?: number | null;
};

/** Writes an entry; with `outcome` `started`, `auditOutcome` completes it. */
export async function audit(entry: NewAuditEntry, now: Date): Promise<AuditEntry> {
  const written: AuditEntry = {
    ...entry,
    id: newId("auditEntry"),
    outcome: entry.outcome ?? "started",
    status: entry.status ?? null,
    created_at: now.toISOString(),
    completed_at: entry.outcome && entry.outcome !== "started" ? now.toISOString() : null,
  };
  await dynamo.send(
    new PutCommand({
      TableName: config.tableName,
      Item: { ...dashboardKeys.audit(entry.project_id, written.id), type: AUDIT_TYPE, ...written },
      ConditionExpression: "attribute_not_exists(pk)",
    }),
  );
  return written;
}

/** The outcome of a change recorded as started. */
export async function auditOutcome(
  entry: AuditEntry,
  status: number,
  now: Date,
  detail?: string,
): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: dashboardKeys.audit(entry.project_id, entry.id),
      UpdateExpression: `SET outcome = :outcome, #status = :status, completed_at = :at${detail ? ", detail = :detail" : ""}`,
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":outcome": status < 400 ? "succeeded" : "failed",
        ":status": status,
        ":at": now.toISOString(),
        ...(detail ? { ":detail": detail.slice(0, 500) } : {}),
      },
    }),
  );
}

export const AUDIT_PAGE_MAX = 100;

/** A page of the log, newest first; `starting_after` is the last id of the page before. */
export async function pageOfAudit(rootProjectId: string, query: Record<string, unknown>) {
  const limit = query.limit === undefined ? 25 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE_MAX) {
    throw invalidField("limit", `must be an integer from 1 to ${AUDIT_PAGE_MAX}`);
  }
  const after = query.starting_after;
  if (after !== undefined && (typeof after !== "string" || !isId("auditEntry", after))) {
    throw invalidField("starting_after", "must be an audit entry id");
  }
  const page = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": dashboardKeys.auditOf(rootProjectId) },
      ScanIndexForward: false,
      Limit: limit,
      ...(after ? { ExclusiveStartKey: dashboardKeys.audit(rootProjectId, after) } : {}),
    }),
  );
  const entries = (page.Items ?? []).map(presentAudit);
  return { audit_log: entries, has_more: page.LastEvaluatedKey !== undefined, limit };
}

export function presentAudit(item: Record<string, unknown>) {
  const { pk: _pk, sk: _sk, type: _type, ...entry } = item;
  return entry as unknown as AuditEntry;
}
