import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import ipaddr from "ipaddr.js";
import type { SFTPWrapper } from "ssh2";
import { addressRange, type ResolvedAddress, type Resolver, systemResolver } from "../webhooks/addresses.ts";
import type { SftpSettings } from "./sftp-settings.ts";
import { Client } from "./ssh-client.ts";

/**
 * One file to an SFTP server with the `ssh2` client: connect (host key checked against the pinned
 * one), write the file under a temporary name, rename it into place (replacing a file of an earlier
 * run), close. The whole delivery has a time limit; every failure is a `DeliveryError` whose
 * message says what went wrong in words a merchant can act on, and never holds the secret.
 */
export const DELIVERY_TIMEOUT_MS = 60_000;
const CONNECT_TIMEOUT_MS = 15_000;

export class DeliveryError extends Error {
  override name = "DeliveryError";
  /** The host key the server showed, when the connection got that far. */
  readonly fingerprint: string | null;
  /**
   * The server refused us (a changed host key, the credentials): trying again changes nothing until
   * the merchant changes the settings. Otherwise (unreachable, timed out, cut off) a later try may pass.
   */
  readonly refused: boolean;
  constructor(message: string, fingerprint: string | null, options?: ErrorOptions & { refused?: boolean }) {
    super(message, options);
    this.fingerprint = fingerprint;
    this.refused = options?.refused ?? false;
  }
}

/** OpenSSH's form of a host key's fingerprint: `SHA256:` and the digest in base64 without padding. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;
}

/**
 * Where a delivery may connect (SSRF protection, the webhooks' rules, `shared/webhooks/url-policy.ts`):
 * every address the host resolves to must be public, except for a sandbox environment in the local
 * stack and the tests (`WEBHOOK_SANDBOX_PRIVATE_NETWORK=allow`), so a server on the developer's
 * machine works. The connection goes to an address checked, never to a name resolved again.
 */
export async function checkedAddress(
  host: string,
  allowPrivateNetwork: boolean,
  resolve: Resolver = systemResolver,
): Promise<string> {
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host))
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new DeliveryError(`The SFTP host ${host} could not be resolved${code ? ` (${code})` : ""}`, null);
    }
  }
  const [first] = addresses;
  if (!first) throw new DeliveryError(`The SFTP host ${host} resolves to no address`, null);
  if (!allowPrivateNetwork) {
    for (const { address } of addresses) {
      const range = addressRange(address);
      if (range !== "public") {
        throw new DeliveryError(
          `The SFTP host must be a public address: ${host} is ${address}, a ${range} address`,
          null,
          {
            refused: true,
          },
        );
      }
    }
  }
  return first.address;
}

export interface DeliveryRequest {
  settings: SftpSettings;
  /** May the host be a private address (a sandbox environment in the local stack)? */
  allowPrivateNetwork: boolean;
  /** The password or private key, opened from the vault for this connection only. */
  secret: string;
  remotePath: string;
  body: Readable;
  timeoutMs?: number;
}

/** Delivers the file; resolves with the fingerprint of the server's host key (to pin when none is). */
export async function deliverBySftp(request: DeliveryRequest): Promise<{ fingerprint: string }> {
  let address: string;
  try {
    address = await checkedAddress(request.settings.host, request.allowPrivateNetwork);
  } catch (error) {
    request.body.destroy();
    throw error;
  }
  return connectAndWrite(request, address);
}

function connectAndWrite(request: DeliveryRequest, address: string): Promise<{ fingerprint: string }> {
  const { settings, secret, remotePath, body } = request;
  const endpoint = `${settings.host}:${settings.port}`;
  const client = new Client();
  let fingerprint: string | null = null;
  let refusedKey = false;

  return new Promise<{ fingerprint: string }>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.end();
      body.destroy();
      if (error) reject(error);
      else resolve({ fingerprint: fingerprint as string });
    };
    const timer = setTimeout(
      () =>
        finish(
          new DeliveryError(
            `The SFTP delivery to ${endpoint} did not finish within ${Math.round((request.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 1000)} s`,
            fingerprint,
          ),
        ),
      request.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    );

    client.on("ready", () => {
      client.sftp((error, sftp) => {
        if (error) {
          finish(
            new DeliveryError(
              `The server at ${endpoint} refused an SFTP session: ${error.message}`,
              fingerprint,
            ),
          );
          return;
        }
        writeFile(sftp, remotePath, body).then(
          () => finish(undefined),
          (cause: Error) =>
            finish(
              new DeliveryError(
                `Writing ${remotePath} on ${endpoint} failed: ${cause.message}`,
                fingerprint,
                {
                  cause,
                },
              ),
            ),
        );
      });
    });
    client.on("error", (error: Error & { level?: string }) => {
      if (refusedKey) {
        finish(
          new DeliveryError(
            `The host key of ${endpoint} (${fingerprint}) is not the one pinned (${settings.host_key_fingerprint}): delivery refused. If the server's key really changed, delete the SFTP settings and set them again.`,
            fingerprint,
            { refused: true },
          ),
        );
      } else if (error.level === "client-authentication") {
        finish(
          new DeliveryError(
            `The server at ${endpoint} refused the ${settings.authentication === "password" ? "password" : "private key"} of ${settings.username}`,
            fingerprint,
            { refused: true },
          ),
        );
      } else if (error.level === "client-timeout") {
        finish(
          new DeliveryError(
            `No SSH connection to ${endpoint} within ${CONNECT_TIMEOUT_MS / 1000} s`,
            fingerprint,
          ),
        );
      } else {
        finish(new DeliveryError(`The SSH connection to ${endpoint} failed: ${error.message}`, fingerprint));
      }
    });
    client.on("close", () =>
      finish(
        new DeliveryError(
          `The server at ${endpoint} closed the connection before the file was written`,
          fingerprint,
        ),
      ),
    );

    client.connect({
      host: address,
      port: settings.port,
      username: settings.username,
      ...(settings.authentication === "password" ? { password: secret } : { privateKey: secret }),
      readyTimeout: CONNECT_TIMEOUT_MS,
      // Only the way the settings chose: no keyboard-interactive prompts, no agent.
      tryKeyboard: false,
      hostVerifier: (key: Buffer) => {
        fingerprint = hostKeyFingerprint(key);
        const pinned = settings.host_key_fingerprint;
        refusedKey = pinned !== null && pinned !== fingerprint;
        return !refusedKey;
      },
    });
  });
}

/** Writes under a temporary name, then moves it into place: the file is whole or absent. */
async function writeFile(sftp: SFTPWrapper, remotePath: string, body: Readable): Promise<void> {
  const partial = `${remotePath}.partial`;
  await pipeline(body, sftp.createWriteStream(partial, { mode: 0o600 }));
  const rename = () =>
    new Promise<void>((resolve, reject) =>
      sftp.rename(partial, remotePath, (error) => (error ? reject(error) : resolve())),
    );
  try {
    await rename();
  } catch {
    // SFTP's rename does not replace an existing file: a file of an earlier run is removed first.
    await new Promise<void>((resolve) => sftp.unlink(remotePath, () => resolve()));
    await rename();
  }
}
