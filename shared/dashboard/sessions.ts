import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { type TransactItem, transactWrite } from "../db/transactions.ts";
import { ApiError } from "../http/errors.ts";
import { ID_PREFIXES, newId, ULID_PATTERN } from "../ids.ts";
import { dashboardKeys, epochSeconds } from "./keys.ts";
import type { Role } from "./roles.ts";

/**
 * Dashboard sessions: server-side items with an idle expiry (30 minutes, extended by the dashboard's
 * own routes) and an absolute one (12 hours), also the item's TTL. The cookie holds
 * `<root project id>.<user id>.<secret>`: the secret is 256 random bits, and the table keeps only its
 * SHA-256; the ids let one read find the item without an index. A session id is replaced after each
 * factor (no fixation). This module is on every API function's path: it loads nothing heavier than
 * the table client.
 */
export const SESSION_COOKIE = "__Host-session";
export const IDLE_MS = 30 * 60_000;
export const ABSOLUTE_MS = 12 * 3600_000;
/** The idle expiry is written again only when it moved this much: not one write per request. */
const TOUCH_AFTER_MS = 60_000;

export type SecondFactorState = "required" | "done" | "not-enrolled";

export interface DashboardSession {
  id: string;
  user_id: string;
  email: string;
  role: Role;
  /** The root project id (`proj_…`). */
  project_id: string;
  second_factor: SecondFactorState;
  csrf_token: string;
  created_at: string;
  idle_expires_at: string;
  absolute_expires_at: string;
  /** A WebAuthn challenge under way (`passkeys.ts`), with when it was made. */
  webauthn_challenge?: string | null;
  webauthn_challenge_at?: string | null;
}

/** A session as loaded from its cookie: the item and the hash that keys it. */
export interface LoadedSession extends DashboardSession {
  secret_hash: string;
}

export const SESSION_TYPE = "dashboard_session";

const ROOT_ID = `${ID_PREFIXES.project}${ULID_PATTERN}`;
const USER_ID = `${ID_PREFIXES.dashboardUser}${ULID_PATTERN}`;
const COOKIE_VALUE = new RegExp(`^(${ROOT_ID})\\.(${USER_ID})\\.([A-Za-z0-9_-]{43})$`);

const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex");

/** The session cookie's value in the request (payload 2.0 keeps cookies in `event.cookies`). */
export function sessionCookieOf(event: APIGatewayProxyEventV2): string | undefined {
  const cookies = event.cookies ?? event.headers?.cookie?.split(";") ?? [];
  for (const cookie of cookies) {
    const trimmed = cookie.trim();
    if (trimmed.startsWith(`${SESSION_COOKIE}=`)) return trimmed.slice(SESSION_COOKIE.length + 1);
  }
  return undefined;
}

function parseCookie(value: string) {
  const match = COOKIE_VALUE.exec(value);
  if (!match) return undefined;
  const [, rootProjectId = "", userId = "", secret = ""] = match;
  return { rootProjectId, userId, secretHash: sha256(secret) };
}

export function setCookie(value: string): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=${ABSOLUTE_MS / 1000}`;
}

export function clearedCookie(): string {
  return `${SESSION_COOKIE}=; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=0`;
}

export const signedOut = () =>
  new ApiError(
    401,
    "request.dashboard.signed-out",
    "Sign in to the dashboard: the session is missing or expired.",
  );

/** The session the request's cookie opens at `now`, or undefined (missing, unknown or expired). */
export async function loadSession(
  event: APIGatewayProxyEventV2,
  now: Date,
): Promise<LoadedSession | undefined> {
  const value = sessionCookieOf(event);
  const parsed = value ? parseCookie(value) : undefined;
  if (!parsed) return undefined;
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: dashboardKeys.session(parsed.rootProjectId, parsed.userId, parsed.secretHash),
      ConsistentRead: true,
    }),
  );
  if (Item?.type !== SESSION_TYPE) return undefined;
  const session = { ...(Item as unknown as DashboardSession), secret_hash: parsed.secretHash };
  if (!isLive(session, now)) return undefined;
  return session;
}

export function isLive(session: DashboardSession, now: Date): boolean {
  const at = now.getTime();
  return Date.parse(session.idle_expires_at) > at && Date.parse(session.absolute_expires_at) > at;
}

/** When the session ends if nothing extends it. */
export const expiresAt = (session: DashboardSession) =>
  new Date(Math.min(Date.parse(session.idle_expires_at), Date.parse(session.absolute_expires_at)));

export interface SessionOwner {
  id: string;
  email: string;
  role: Role;
  project_id: string;
}

/**
 * A new session for `user` (its cookie to set), replacing `replacing` in the same transaction: a
 * factor given always moves the person to a new id and secret. The absolute expiry is kept from
 * the session replaced.
 */
export async function startSession(
  user: SessionOwner,
  secondFactor: SecondFactorState,
  now: Date,
  replacing?: LoadedSession,
): Promise<{ session: DashboardSession; cookie: string }> {
  const secret = randomBytes(32).toString("base64url");
  const absolute = replacing?.absolute_expires_at ?? new Date(now.getTime() + ABSOLUTE_MS).toISOString();
  const session: DashboardSession = {
    id: newId("dashboardSession"),
    user_id: user.id,
    email: user.email,
    role: user.role,
    project_id: user.project_id,
    second_factor: secondFactor,
    csrf_token: randomBytes(32).toString("base64url"),
    created_at: now.toISOString(),
    idle_expires_at: new Date(now.getTime() + IDLE_MS).toISOString(),
    absolute_expires_at: absolute,
  };
  const writes: TransactItem[] = [
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...dashboardKeys.session(user.project_id, user.id, sha256(secret)),
          type: SESSION_TYPE,
          ...session,
          expires_at: epochSeconds(new Date(absolute)),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
  ];
  if (replacing) {
    // The session replaced must still exist: a factor given twice at once makes one session, not two.
    writes.push({
      Delete: {
        TableName: config.tableName,
        Key: dashboardKeys.session(replacing.project_id, replacing.user_id, replacing.secret_hash),
        ConditionExpression: "attribute_exists(pk)",
      },
    });
  }
  await transactWrite(writes);
  return { session, cookie: setCookie(`${user.project_id}.${user.id}.${secret}`) };
}

/** Moves the idle expiry on when it last moved over a minute ago. */
export async function touchSession(session: LoadedSession, now: Date): Promise<LoadedSession> {
  const idle = new Date(now.getTime() + IDLE_MS);
  if (idle.getTime() - Date.parse(session.idle_expires_at) < TOUCH_AFTER_MS) return session;
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: dashboardKeys.session(session.project_id, session.user_id, session.secret_hash),
        UpdateExpression: "SET idle_expires_at = :idle",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":idle": idle.toISOString() },
      }),
    );
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") throw signedOut();
    throw error;
  }
  return { ...session, idle_expires_at: idle.toISOString() };
}

export async function endSession(session: LoadedSession): Promise<void> {
  await dynamo.send(
    new DeleteCommand({
      TableName: config.tableName,
      Key: dashboardKeys.session(session.project_id, session.user_id, session.secret_hash),
    }),
  );
}

/** Deletes every session of a person (sign-out everywhere, a role change, a removal). */
export async function endAllSessions(rootProjectId: string, userId: string): Promise<number> {
  let ended = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": dashboardKeys.sessionsOf(rootProjectId, userId) },
        ProjectionExpression: "pk, sk",
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      await dynamo.send(
        new DeleteCommand({ TableName: config.tableName, Key: { pk: item.pk, sk: item.sk } }),
      );
      ended++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return ended;
}

/** Whether the request's `X-CSRF-Token` is the session's (constant time). */
export function csrfMatches(session: DashboardSession, header: string | undefined): boolean {
  if (!header) return false;
  const given = Buffer.from(sha256(header), "hex");
  const expected = Buffer.from(sha256(session.csrf_token), "hex");
  return timingSafeEqual(given, expected);
}

export const csrfRefused = () =>
  new ApiError(
    403,
    "request.dashboard.csrf",
    "Send the session's csrf_token in the X-CSRF-Token header with every change.",
  );

/**
 * A browser's `Origin`, when sent, must be this API's own (its `Host`): a page elsewhere cannot make
 * a signed-in browser change anything, even where SameSite is not honoured.
 */
export function originAllowed(event: APIGatewayProxyEventV2): boolean {
  const origin = event.headers?.origin;
  if (origin === undefined) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const own = event.headers?.host ?? event.requestContext?.domainName;
  return own !== undefined && host.toLowerCase() === own.toLowerCase();
}

/** A session as the dashboard shows it: its id, never its secret. */
export function presentSession(session: DashboardSession) {
  return {
    id: session.id,
    expires_at: expiresAt(session).toISOString(),
    second_factor: session.second_factor,
    csrf_token: session.csrf_token,
    role: session.role,
    project_id: session.project_id,
    environments: {
      sandbox: `test-${session.project_id}`,
      live: session.project_id,
    },
  };
}
