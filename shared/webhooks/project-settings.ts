import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { activityWrite } from "../activities/activity.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { AuthenticatedCaller, Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { type ProjectEnvironment, presentProject, rememberEnvironment } from "../projects/environment.ts";
import {
  checkSupervisorAccess,
  SUPERVISOR_ACCESS,
  type SupervisorAccess,
  supervisorAccessTitle,
} from "../projects/supervisor-access.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";
import { newWebhookSigningSecret } from "./signature.ts";
import { webhookUrl } from "./url-field.ts";
import { assertWebhookUrlAllowed } from "./url-policy.ts";

/**
 * An environment's webhook settings, kept on its project item: `webhook_url` (where its events
 * go) and `webhook_signing_secret` (the key of every delivery's signature). Environments get their
 * secret when created; one created before secrets existed gets one on first need, through a
 * conditional write (`if_not_exists`) so that two first needs at once agree on one secret.
 */
export interface WebhookSettings {
  webhook_url: string | null;
  webhook_signing_secret: string;
}

/**
 * `PUT /projects/{id}`: `webhook_url` (an empty string removes it; absent leaves it as it is), and for
 * a supervised project `supervisor_access` (`shared/projects/supervision.ts`).
 */
export const projectChanges = z.object({
  webhook_url: webhookUrl,
  supervisor_access: z.optional(z.enum(SUPERVISOR_ACCESS, `must be one of ${SUPERVISOR_ACCESS.join(", ")}`)),
});

/** `GET /projects/{id}`: the caller's own environment only; any other id is not found. */
export async function getProjectSettings(caller: Caller | AuthenticatedCaller, id: string) {
  if (id !== caller.projectId) throw notFound("project", id);
  const item = await readProjectItem(caller.projectId);
  if (!item) throw notFound("project", id);
  const shown =
    typeof item.webhook_signing_secret === "string" ? item : await writeSettings(caller.projectId, {});
  return present(shown, mayReadSigningSecret(caller));
}

/**
 * Whether the caller may see the webhook signing secret (with it, anyone can forge a delivery the
 * merchant's endpoint trusts): a private key, or in the dashboard an owner or a developer. Support
 * and read-only people see `null`.
 */
function mayReadSigningSecret(caller: Caller | AuthenticatedCaller): boolean {
  const role = "user" in caller ? caller.user?.role : undefined;
  return role === undefined || role === "owner" || role === "developer";
}

/** `PUT /projects/{id}`: sets or removes the webhook URL, refused when its environment may not send there. */
export async function changeProjectSettings(caller: Caller, id: string, input: unknown) {
  if (id !== caller.projectId) throw notFound("project", id);
  const { webhook_url: url, supervisor_access: access } = parseInput(projectChanges, input);
  if (access !== undefined) checkSupervisorAccess(caller);
  if (url) await assertWebhookUrlAllowed("webhook_url", url, caller);
  const changes = {
    ...(url === undefined ? {} : { webhook_url: url }),
    ...(access === undefined ? {} : { supervisor_access: access }),
  };
  if (url === undefined && access === undefined) return present(await writeSettings(caller.projectId, {}));
  const titles = [
    ...(url === undefined ? [] : [url ? `Webhook URL set to ${url}` : "Webhook URL removed"]),
    ...(access === undefined ? [] : [supervisorAccessTitle(access)]),
  ];
  const activity = activityWrite(
    caller,
    "project.updated",
    titles.join("; "),
    { type: "project", id: caller.projectId },
    clock.now(),
  );
  const item = await writeSettings(caller.projectId, changes, activity);
  // This container sees the change at once; others within their environment cache's 30 seconds.
  const { pk, sk, type, ...environment } = item;
  rememberEnvironment(environment as unknown as ProjectEnvironment);
  return present(item);
}

/** The environment's webhook URL, read consistently (null when none is set, undefined without an environment). */
export async function findWebhookUrl(scope: Scope): Promise<string | null | undefined> {
  const item = await readProjectItem(scope);
  if (!item) return undefined;
  return typeof item.webhook_url === "string" ? item.webhook_url : null;
}

/**
 * Secrets never change once set, so a worker keeps each for a while instead of reading the
 * project at every delivery (a rotation would have to allow for this delay).
 */
const SECRET_CACHE_MS = 5 * 60_000;
const SECRET_CACHE_MAX_ENTRIES = 1_000;
const secrets = new Map<Scope, { secret: string; until: number }>();

/** The key deliveries of `scope` are signed with, created on first need. */
export async function signingSecret(scope: Scope): Promise<string> {
  const now = Date.now();
  const cached = secrets.get(scope);
  if (cached && cached.until > now) return cached.secret;
  const item = await readProjectItem(scope);
  const secret =
    typeof item?.webhook_signing_secret === "string"
      ? item.webhook_signing_secret
      : ((await writeSettings(scope, {})).webhook_signing_secret as string);
  if (secrets.size >= SECRET_CACHE_MAX_ENTRIES) secrets.clear();
  secrets.set(scope, { secret, until: now + SECRET_CACHE_MS });
  return secret;
}

async function readProjectItem(scope: Scope): Promise<Record<string, unknown> | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.project(scope), ConsistentRead: true }),
  );
  return Item?.type === "project" ? Item : undefined;
}

/**
 * Applies `changes` and gives the environment a signing secret unless it has one; throws 404 without
 * an environment. A change comes with its activity, written in the same transaction.
 */
async function writeSettings(
  scope: Scope,
  changes: { webhook_url?: string | null; supervisor_access?: SupervisorAccess },
  activity: TransactItem[] = [],
): Promise<Record<string, unknown>> {
  const assignments = ["#secret = if_not_exists(#secret, :secret)"];
  const names: Record<string, string> = { "#secret": "webhook_signing_secret", "#type": "type" };
  const values: Record<string, unknown> = { ":secret": newWebhookSigningSecret(), ":type": "project" };
  if (changes.webhook_url !== undefined) {
    assignments.push("#url = :url");
    names["#url"] = "webhook_url";
    values[":url"] = changes.webhook_url;
  }
  if (changes.supervisor_access !== undefined) {
    assignments.push("#access = :access");
    names["#access"] = "supervisor_access";
    values[":access"] = changes.supervisor_access;
  }
  const update = {
    TableName: config.tableName,
    Key: keys.project(scope),
    UpdateExpression: `SET ${assignments.join(", ")}`,
    ConditionExpression: "#type = :type",
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
  try {
    if (activity.length === 0) {
      const { Attributes } = await dynamo.send(new UpdateCommand({ ...update, ReturnValues: "ALL_NEW" }));
      return Attributes ?? {};
    }
    // A transaction returns no item: the change is applied to the item read after it.
    await transactWrite([{ Update: update }, ...activity]);
    return (await readProjectItem(scope)) ?? {};
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException || failedConditions(error)?.includes(0)) {
      throw notFound("project", scope);
    }
    throw error;
  }
}

/** The project as `GET`/`PUT /projects/{id}` answer it: its public view plus its webhook settings. */
function present(item: Record<string, unknown>, withSecret = true) {
  const { pk, sk, type, ...environment } = item;
  return {
    ...presentProject(environment as unknown as ProjectEnvironment),
    webhook_url: typeof item.webhook_url === "string" ? item.webhook_url : null,
    webhook_signing_secret: withSecret ? (item.webhook_signing_secret as string) : null,
    ...(typeof item.supervisor_project_id === "string"
      ? {
          supervisor_project_id: item.supervisor_project_id,
          supervisor_access: item.supervisor_access ?? "none",
        }
      : {}),
  };
}
