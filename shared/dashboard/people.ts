import { config } from "../config.ts";
import { type TransactItem, transactWrite } from "../db/transactions.ts";
import { ApiError, invalidField, notFound } from "../http/errors.ts";
import { dashboardKeys } from "./keys.ts";
import { isRole, type Role } from "./roles.ts";
import { endAllSessions, type LoadedSession } from "./sessions.ts";
import { type DashboardUser, findUserById, USER_TYPE } from "./users.ts";

/**
 * Owners manage the project's people: change a role, remove a person. Each change is conditional on
 * the acting owner still being an owner (a transaction with a check of their item), so two owners
 * demoting each other at once cannot leave the project without one; nobody changes or removes
 * themselves. The person's sessions end: their next request needs a new sign-in with the new role.
 */
export function readRole(value: unknown): Role {
  if (!isRole(value)) throw invalidField("role", "must be owner, developer, support or read-only");
  return value;
}

const notYourself = () =>
  new ApiError(
    409,
    "request.dashboard.own-account",
    "Owners cannot change their own role or remove themselves.",
  );

async function target(session: LoadedSession, userId: string): Promise<DashboardUser> {
  if (userId === session.user_id) throw notYourself();
  const user = await findUserById(session.project_id, userId);
  if (!user) throw notFound("user", userId);
  return user;
}

function actingOwnerCheck(session: LoadedSession): TransactItem {
  return {
    ConditionCheck: {
      TableName: config.tableName,
      Key: dashboardKeys.user(session.email),
      ConditionExpression: "#role = :owner AND project_id = :project",
      ExpressionAttributeNames: { "#role": "role" },
      ExpressionAttributeValues: { ":owner": "owner", ":project": session.project_id },
    },
  };
}

const noLongerOwner = () =>
  new ApiError(403, "request.dashboard.forbidden", "Your role in this project does not allow this action.");

async function run(items: TransactItem[]) {
  try {
    await transactWrite(items);
  } catch (error) {
    if ((error as Error).name === "TransactionCanceledException") throw noLongerOwner();
    throw error;
  }
}

export async function changeRole(session: LoadedSession, userId: string, role: Role): Promise<DashboardUser> {
  const user = await target(session, userId);
  await run([
    actingOwnerCheck(session),
    {
      Update: {
        TableName: config.tableName,
        Key: dashboardKeys.user(user.email),
        UpdateExpression: "SET #role = :role",
        ConditionExpression: "#type = :type AND id = :id",
        ExpressionAttributeNames: { "#role": "role", "#type": "type" },
        ExpressionAttributeValues: { ":role": role, ":type": USER_TYPE, ":id": user.id },
      },
    },
  ]);
  await endAllSessions(user.project_id, user.id);
  return { ...user, role };
}

export async function removeUser(session: LoadedSession, userId: string): Promise<DashboardUser> {
  const user = await target(session, userId);
  await run([
    actingOwnerCheck(session),
    {
      Delete: {
        TableName: config.tableName,
        Key: dashboardKeys.user(user.email),
        ConditionExpression: "#type = :type AND id = :id",
        ExpressionAttributeNames: { "#type": "type" },
        ExpressionAttributeValues: { ":type": USER_TYPE, ":id": user.id },
      },
    },
  ]);
  await endAllSessions(user.project_id, user.id);
  return user;
}
