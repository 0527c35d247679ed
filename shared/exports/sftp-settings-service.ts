import ipaddr from "ipaddr.js";
import { clock } from "../clock.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField, notFound } from "../http/errors.ts";
import { parseInput } from "../validation/parse.ts";
import { addressRange } from "../webhooks/addresses.ts";
import { webhookSettings } from "../webhooks/settings.ts";
import { ENDPOINT, sftpSettingsInput } from "./schema.ts";
import {
  deleteSettings,
  findSettings,
  putSettings,
  type SftpAuthentication,
  type SftpSettings,
  sealSecret,
} from "./sftp-settings.ts";
import { parseKey } from "./ssh-key-parser.ts";

/**
 * `/projects/{project_id}/sftp-settings`: the caller's own environment only (another id answers
 * 404, as `GET /projects/{project_id}` does); the secret is sealed and never answered.
 */
function parseEndpoint(endpoint: string): { host: string; port: number } {
  const match = ENDPOINT.exec(endpoint);
  const port = Number(match?.[3]);
  if (!match || port < 1 || port > 65_535) throw invalidField("endpoint", "must have a port from 1 to 65535");
  return { host: match[1] ?? match[2] ?? "", port };
}

/** Whether `text` is an unencrypted private key ssh2 can use (its key parser alone, not the SSH client). */
function privateKeyProblem(text: string): string | undefined {
  const parsed = parseKey(text);
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
  // An address given as such is checked at once (a host name at each delivery, when resolved).
  const allowPrivateNetwork = caller.sandbox && webhookSettings.sandboxMayUsePrivateNetwork;
  if (ipaddr.isValid(host) && !allowPrivateNetwork && addressRange(host) !== "public") {
    throw invalidField("endpoint", `must be a public address: ${host} is a ${addressRange(host)} address`);
  }
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
    secret: await sealSecret(caller.projectId, authentication, secret),
    host_key_fingerprint: sameServer ? current.host_key_fingerprint : null,
    last_error: null,
    updated_at: clock.now().toISOString(),
  };
  await putSettings(settings);
}

/** `DELETE /projects/{project_id}/sftp-settings`: no more deliveries; the sealed secret goes with it. */
export async function deleteSftpSettings(caller: Caller, projectId: string): Promise<void> {
  ownEnvironment(caller, projectId);
  await deleteSettings(caller.projectId);
}
