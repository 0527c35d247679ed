import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { cardVault, type SealContext, type SealedSecret } from "../cards/vault.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";

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

export async function findSettings(scope: Scope): Promise<SftpSettings | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.sftpSettings(scope), ConsistentRead: true }),
  );
  if (Item?.type !== ITEM_TYPE) return undefined;
  const { pk, sk, type, ...settings } = Item;
  return settings as SftpSettings;
}

/** The environment's SFTP settings, secret included (sealed): for a delivery. */
export const sftpSettingsOf = findSettings;

/** Seals the password or private key of an environment's settings. */
export async function sealSecret(scope: Scope, authentication: SftpAuthentication, secret: string) {
  return cardVault().seal(secret, sealContext(scope, authentication));
}

export async function putSettings(settings: SftpSettings): Promise<void> {
  await dynamo.send(
    new PutCommand({
      TableName: config.tableName,
      Item: { ...keys.sftpSettings(settings.project_id), type: ITEM_TYPE, ...settings },
    }),
  );
}

export async function deleteSettings(scope: Scope): Promise<void> {
  await dynamo.send(new DeleteCommand({ TableName: config.tableName, Key: keys.sftpSettings(scope) }));
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
