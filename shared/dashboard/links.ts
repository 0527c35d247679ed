import { createHash, randomBytes } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { type TransactItem, transactWrite } from "../db/transactions.ts";
import { ApiError, conflict } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { dashboardKeys, epochSeconds } from "./keys.ts";
import type { Role } from "./roles.ts";
import { type DashboardUser, findUser, newUserPut, USER_TYPE } from "./users.ts";

/**
 * One-time links: an owner's invitation of a person with a role, and the sign-in link a project's
 * first owner gets from `npm run -s project -- create`. The token (256 random bits) is in the link
 * only, in its fragment (`<base>/dashboard#/accept?token=…`), so no server log ever holds it; the
 * table keeps its SHA-256. Accepting sets the person's password and uses the token up, in one
 * transaction. A link is valid 7 days.
 */
export const LINK_VALID_MS = 7 * 24 * 3600_000;
export const LINK_TYPE = "dashboard_link";

export type LinkKind = "invitation" | "sign-in";

export interface DashboardLink {
  id: string;
  kind: LinkKind;
  project_id: string;
  email: string;
  role: Role;
  /** Who made it: an owner's user id, or null for the CLI. */
  created_by: string | null;
  created_at: string;
  valid_until: string;
}

const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex");

export const linkUrl = (baseUrl: string, token: string) =>
  `${baseUrl.replace(/\/$/, "")}/dashboard#/accept?token=${token}`;

function linkPut(link: DashboardLink, token: string): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: {
        ...dashboardKeys.token(sha256(token)),
        type: LINK_TYPE,
        ...link,
        expires_at: epochSeconds(new Date(Date.parse(link.valid_until) + 24 * 3600_000)),
      },
      ConditionExpression: "attribute_not_exists(pk)",
    },
  };
}

function newLink(
  kind: LinkKind,
  fields: Pick<DashboardLink, "project_id" | "email" | "role" | "created_by">,
  now: Date,
): { link: DashboardLink; token: string } {
  return {
    token: randomBytes(32).toString("base64url"),
    link: {
      id: newId("invitation"),
      kind,
      ...fields,
      created_at: now.toISOString(),
      valid_until: new Date(now.getTime() + LINK_VALID_MS).toISOString(),
    },
  };
}

/** An owner invites `email` with `role`: refused when the email already has a dashboard account. */
export async function invite(
  rootProjectId: string,
  email: string,
  role: Role,
  createdBy: string,
  now: Date,
): Promise<{ link: DashboardLink; token: string }> {
  if (await findUser(email)) throw emailTaken(email);
  const made = newLink("invitation", { project_id: rootProjectId, email, role, created_by: createdBy }, now);
  await transactWrite([linkPut(made.link, made.token)]);
  return made;
}

const emailTaken = (email: string) =>
  conflict("request.dashboard.email-taken", `${email} already has a dashboard account.`);

/** The first owner of a new project (no password yet) and their one-time sign-in link. */
export async function firstOwner(
  rootProjectId: string,
  email: string,
  now: Date,
): Promise<{ user: DashboardUser; link: DashboardLink; token: string }> {
  const { user, write } = newUserPut(rootProjectId, email, "owner", null, now);
  const made = newLink("sign-in", { project_id: rootProjectId, email, role: "owner", created_by: null }, now);
  try {
    await transactWrite([write, linkPut(made.link, made.token)]);
  } catch (error) {
    if ((error as Error).name === "TransactionCanceledException") throw emailTaken(email);
    throw error;
  }
  return { user, ...made };
}

export const linkInvalid = () =>
  new ApiError(
    400,
    "request.dashboard.link-invalid",
    "This link is not valid: it was used already, has expired, or was never made. Ask an owner for a new one.",
  );

/**
 * Uses the link `token` up and sets its person's password (`passwordHash`), creating the person of
 * an invitation, in one transaction; answers the person.
 */
export async function accept(token: string, passwordHash: string, now: Date): Promise<DashboardUser> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw linkInvalid();
  const key = dashboardKeys.token(sha256(token));
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: key, ConsistentRead: true }),
  );
  const link = Item?.type === LINK_TYPE ? (Item as unknown as DashboardLink) : undefined;
  if (!link || Date.parse(link.valid_until) <= now.getTime()) throw linkInvalid();
  const useUp: TransactItem = {
    Delete: { TableName: config.tableName, Key: key, ConditionExpression: "attribute_exists(pk)" },
  };
  let user: DashboardUser;
  let write: TransactItem;
  if (link.kind === "invitation") {
    ({ user, write } = newUserPut(link.project_id, link.email, link.role, passwordHash, now));
  } else {
    const existing = await findUser(link.email);
    if (!existing || existing.project_id !== link.project_id) throw linkInvalid();
    user = { ...existing, password_hash: passwordHash };
    write = {
      Update: {
        TableName: config.tableName,
        Key: dashboardKeys.user(link.email),
        UpdateExpression: "SET password_hash = :hash, failures = :zero",
        ConditionExpression: "#type = :type AND project_id = :project",
        ExpressionAttributeNames: { "#type": "type" },
        ExpressionAttributeValues: {
          ":hash": passwordHash,
          ":zero": 0,
          ":type": USER_TYPE,
          ":project": link.project_id,
        },
      },
    };
  }
  try {
    await transactWrite([useUp, write]);
  } catch (error) {
    // Used at the same time by another request, or the email took an account meanwhile.
    if ((error as Error).name === "TransactionCanceledException") throw linkInvalid();
    throw error;
  }
  return user;
}

/** An invitation as the owner sees it (never its token: the link is shown once, in the answer that made it). */
export function presentLink(link: DashboardLink) {
  return {
    id: link.id,
    kind: link.kind,
    email: link.email,
    role: link.role,
    created_at: link.created_at,
    expires_at: link.valid_until,
  };
}
