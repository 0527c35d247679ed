import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { cardVault, type SealContext, type SealedSecret } from "../cards/vault.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField, notFound } from "../http/errors.ts";
import { parseInput } from "../validation/parse.ts";
import { ENDPOINT, sftpSettingsInput } from "./schema.ts";

/**
 * Where an environment's automatic exports are delivered: an SFTP server (`endpoint` host:port), a
 * user, and a password or a private key. The secret is sealed in the vault (as gateway
 * configurations' secret settings are), bound to the environment and its kind, and is never
 * answered nor logged. The server's host key is pinned on the first successful connection: a later
 * connection to another key is refused (`delivery.ts`), until the merchant sets the settings again.
 */
const ITEM_TYPE = "sftp-settings";

export type SftpAuthentication = "password" | "private_key";

export interface SftpSettings {
  project_id: string;
  host: string;
  port: number;
  username: string;
  authentication: SftpAuthentication;
  secret: SealedSecret;
  /** `SHA256:<base64>` of the server's host key, pinned on the first successful connection. */
  host_key_fingerprint: string | null;
  /** Why the last delivery failed (cleared by the next success). */
  last_error: string | null;
  updated_at: string;
}

const sealContext = (scope: Scope, authentication: SftpAuthentication): SealContext => ({
  projectId: scope,
  cardId: ITEM_TYPE,
  field: `setting:${authentication}`,
});

/** The sealed password or private key, in clear, for a delivery's connection only. */
export async function openSecret(settings: SftpSettings): Promise<string> {
  return cardVault().open(settings.secret, sealContext(settings.project_id, settings.authentication));
}

function parseEndpoint(endpoint: string): { host: string; port: number } {
  const match = ENDPOINT.exec(endpoint);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65_535) throw invalidField("endpoint", "must have a port from 1 to 65535");
  return { host: match[1] ?? match[2] ?? "", port };
}

/** Whether `text` is an unencrypted private key ssh2 can use (imported only where a key is set). */
async function privateKeyProblem(text: string): Promise<string | undefined> {
  const { utils } = await import("ssh2");
  const parsed = utils.parseKey(text);
  if (parsed instanceof Error) {
    return /encrypted/i.test(parsed.message)
      ? "must not be encrypted with a passphrase"
      : "must be a private key in OpenSSH, PEM (PKCS#1 or PKCS#8) or PuTTY format";
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key?.isPrivateKey()) return "must be a private key, not a public key";
  return undefined;
}

function ownEnvironment(caller: Caller, projectId: string): void {
  if (projectId !== caller.projectId) throw notFound("project", projectId);
}

async function findSettings(scope: Scope): Promise<SftpSettings | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.sftpSettings(scope), ConsistentRead: true }),
  );
  if (Item?.type !== ITEM_TYPE) return undefined;
  const { pk, sk, type, ...settings } = Item;
  return settings as SftpSettings;
}

/** The environment's SFTP settings, secret included (sealed): for a delivery. */
export const sftpSettingsOf = findSettings;

export function presentSftpSettings(settings: SftpSettings | undefined) {
  return {
    enabled: settings !== undefined,
    endpoint: settings ? formatEndpoint(settings.host, settings.port) : null,
    username: settings?.username ?? null,
    authentication: settings?.authentication ?? null,
    host_key_fingerprint: settings?.host_key_fingerprint ?? null,
    last_error: settings?.last_error ?? null,
  };
}

function formatEndpoint(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** `GET /projects/{project_id}/sftp-settings` */
export async function getSftpSettings(caller: Caller, projectId: string) {
  ownEnvironment(caller, projectId);
  return presentSftpSettings(await findSettings(caller.projectId));
}

/**
 * `PUT /projects/{project_id}/sftp-settings`: the endpoint, the user and one secret (a password or a
 * private key). The same endpoint keeps its pinned host key; another one is pinned anew on its first
 * connection.
 */
export async function setSftpSettings(caller: Caller, projectId: string, input: unknown): Promise<void> {
  ownEnvironment(caller, projectId);
  const fields = parseInput(sftpSettingsInput, input);
  const { host, port } = parseEndpoint(fields.endpoint);
  if (fields.password !== undefined && fields.private_key !== undefined) {
    throw invalidField("private_key", "cannot be given with password: choose one way to log in");
  }
  const authentication: SftpAuthentication = fields.private_key !== undefined ? "private_key" : "password";
  const secret = fields.private_key ?? fields.password;
  if (secret === undefined)
    throw invalidField("password", "is required (or private_key)", "missing-password");
  if (authentication === "private_key") {
    const problem = await privateKeyProblem(secret);
    if (problem) throw invalidField("private_key", problem);
  }
  const current = await findSettings(caller.projectId);
  const sameServer = current?.host === host && current.port === port;
  const settings: SftpSettings = {
    project_id: caller.projectId,
    host,
    port,
    username: fields.username,
    authentication,
    secret: await cardVault().seal(secret, sealContext(caller.projectId, authentication)),
    host_key_fingerprint: sameServer ? current.host_key_fingerprint : null,
    last_error: null,
    updated_at: clock.now().toISOString(),
  };
  await dynamo.send(
    new PutCommand({
      TableName: config.tableName,
      Item: { ...keys.sftpSettings(caller.projectId), type: ITEM_TYPE, ...settings },
    }),
  );
}

/** `DELETE /projects/{project_id}/sftp-settings`: no more deliveries; the sealed secret goes with it. */
export async function deleteSftpSettings(caller: Caller, projectId: string): Promise<void> {
  ownEnvironment(caller, projectId);
  await dynamo.send(
    new DeleteCommand({ TableName: config.tableName, Key: keys.sftpSettings(caller.projectId) }),
  );
}

/**
 * Pins the host key met on the first successful connection, on the condition that the settings are
 * those connected with and nothing is pinned yet (a concurrent delivery pinned the same or refused).
 */
export async function pinHostKey(settings: SftpSettings, fingerprint: string): Promise<void> {
  await dynamo
    .send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.sftpSettings(settings.project_id),
        UpdateExpression: "SET #pin = :pin",
        ConditionExpression: "#updated = :updated AND (attribute_not_exists(#pin) OR #pin = :null)",
        ExpressionAttributeNames: { "#pin": "host_key_fingerprint", "#updated": "updated_at" },
        ExpressionAttributeValues: { ":pin": fingerprint, ":updated": settings.updated_at, ":null": null },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.name === "ConditionalCheckFailedException")) throw error;
    });
}

/** Records the last delivery's error on the settings (null after a success), if they were not replaced. */
export async function recordDeliveryError(settings: SftpSettings, error: string | null): Promise<void> {
  await dynamo
    .send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.sftpSettings(settings.project_id),
        UpdateExpression: "SET #error = :error",
        ConditionExpression: "#updated = :updated",
        ExpressionAttributeNames: { "#error": "last_error", "#updated": "updated_at" },
        ExpressionAttributeValues: { ":error": error, ":updated": settings.updated_at },
      }),
    )
    .catch((failure: unknown) => {
      if (!(failure instanceof Error && failure.name === "ConditionalCheckFailedException")) throw failure;
    });
}
