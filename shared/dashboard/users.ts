import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { SealedSecret } from "../cards/vault.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import type { TransactItem } from "../db/transactions.ts";
import { invalidField } from "../http/errors.ts";
import { environmentProjectId, newId } from "../ids.ts";
import { dashboardKeys } from "./keys.ts";
import type { Role } from "./roles.ts";

/**
 * A person who signs in to a project's dashboard, with one role in it. The item is keyed by the
 * email (lower case), so sign-in finds it in one read, and an email is unique across the stage: one
 * person, one project (a second project needs a second email). Listed per project through `gsi1`.
 */
export interface DashboardUser {
  id: string;
  email: string;
  /** The root project id (`proj_…`), the parent of the sandbox and live environments. */
  project_id: string;
  role: Role;
  /** `scrypt$…` (`passwords.ts`); null until the person accepts their link and sets one. */
  password_hash: string | null;
  /** The TOTP secret once confirmed, sealed in the vault (`totp.ts`); never answered, never logged. */
  totp_secret: SealedSecret | null;
  /** A secret being enrolled (sealed), until a code confirms it (`POST /dashboard/totp/confirm`). */
  totp_pending_secret?: SealedSecret | null;
  /** The last 30-second step a code was accepted for: a code is accepted once. */
  totp_last_step?: number;
  /** Credential ids of the person's passkeys (`passkeys.ts` keeps each in an item of its own). */
  passkey_ids?: string[];
  /** Failed sign-ins in a row (password or second factor), and when the last was (`lockout.ts`). */
  failures?: number;
  last_failure_at?: string | null;
  created_at: string;
}

export const USER_TYPE = "dashboard_user";

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** The email as it is stored and looked up: trimmed, lower case; a 400 naming `field` when malformed. */
export function normalEmail(value: unknown, field = "email"): string {
  const email = typeof value === "string" ? value.trim().toLowerCase() : "";
  if (!EMAIL.test(email) || email.length > 254) throw invalidField(field, "must be an email address");
  return email;
}

export async function findUser(email: string): Promise<DashboardUser | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: dashboardKeys.user(email), ConsistentRead: true }),
  );
  return Item?.type === USER_TYPE ? (Item as unknown as DashboardUser) : undefined;
}

/** A project's person by id (owners' changes): the listing index, then the item itself, read consistently. */
export async function findUserById(rootProjectId: string, id: string): Promise<DashboardUser | undefined> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      IndexName: "gsi1",
      KeyConditionExpression: "gsi1pk = :pk AND gsi1sk = :id",
      ExpressionAttributeValues: { ":pk": dashboardKeys.usersOf(rootProjectId), ":id": id },
    }),
  );
  const email = Items?.[0]?.email as string | undefined;
  if (!email) return undefined;
  const user = await findUser(email);
  return user && user.project_id === rootProjectId && user.id === id ? user : undefined;
}

export async function listUsers(rootProjectId: string): Promise<DashboardUser[]> {
  const users: DashboardUser[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk",
        ExpressionAttributeValues: { ":pk": dashboardKeys.usersOf(rootProjectId) },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    users.push(...((page.Items ?? []) as unknown as DashboardUser[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return users;
}

/** The write that creates a person (refused when the email is taken, in any project). */
export function newUserPut(
  rootProjectId: string,
  email: string,
  role: Role,
  passwordHash: string | null,
  now: Date,
): { user: DashboardUser; write: TransactItem } {
  const user: DashboardUser = {
    id: newId("dashboardUser"),
    email,
    project_id: rootProjectId,
    role,
    password_hash: passwordHash,
    totp_secret: null,
    passkey_ids: [],
    failures: 0,
    created_at: now.toISOString(),
  };
  return {
    user,
    write: {
      Put: {
        TableName: config.tableName,
        Item: {
          ...dashboardKeys.user(email),
          gsi1pk: dashboardKeys.usersOf(rootProjectId),
          gsi1sk: user.id,
          type: USER_TYPE,
          ...user,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
  };
}

/** A person as the dashboard shows them: never a hash nor a secret. */
export function presentUser(user: DashboardUser) {
  return {
    id: user.id,
    email: user.email,
    role: user.role,
    project_id: user.project_id,
    totp_enabled: Boolean(user.totp_secret),
    passkeys: user.passkey_ids?.length ?? 0,
    password_set: Boolean(user.password_hash),
    created_at: user.created_at,
  };
}

/** The two environments of a project, as the dashboard switches between them. */
export function environmentsOf(rootProjectId: string) {
  return {
    sandbox: environmentProjectId(rootProjectId, true),
    live: environmentProjectId(rootProjectId, false),
  };
}

/** Whether a person has a second factor to give (TOTP or a passkey). */
export function hasSecondFactor(user: DashboardUser): boolean {
  return Boolean(user.totp_secret) || (user.passkey_ids?.length ?? 0) > 0;
}
