import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { activityWrite } from "../activities/activity.ts";
import type { SealedSecret } from "../cards/vault.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { failedConditions, transactWrite } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";

/**
 * Apple Pay merchant certificates whose key pair we make and hold (the clients' "alternative merchant
 * certificates"): Apple encrypts each Apple Pay token to the public key of a payment processing
 * certificate, and the private key that opens it never leaves us.
 *
 * 1. `POST` makes an EC P-256 key pair (Apple's payment processing certificates are ECC 256) and a
 *    certificate signing request; the private key is sealed at once (`cards/vault.ts`) and never shown.
 * 2. The merchant uploads the CSR (`GET …/{id}`: `csr`) to Apple and gets the certificate back.
 * 3. `PUT …/{id}` with `certificate` (PEM or base64 DER): it must carry our key pair's public key and
 *    be valid now; the certificate becomes `active`.
 * Making a key pair and taking a certificate is `issuing.ts` (the only functions that load the
 * certificate code); this module reads and deletes.
 * Rotation: make a new one and activate it while the old one still works (a token names the key it
 * was encrypted to, by its public key's hash, so both open their tokens at once), then `DELETE` the
 * old one. Every change lands in the activity log.
 */
export const ENTITY = "applepay_certificate";
/** Certificates an environment may hold at once: enough for a rotation, and a few domains' worth. */
export const MAX_CERTIFICATES = 10;

export interface ApplePayCertificate {
  id: string;
  project_id: string;
  sandbox: boolean;
  status: "awaiting_certificate" | "active";
  csr: string;
  /** base64 SHA-256 of the public key (SubjectPublicKeyInfo): what a token's `publicKeyHash` names. */
  public_key_hash: string;
  certificate: string | null;
  certificate_expires_at: string | null;
  created_at: string;
  activated_at: string | null;
}

export interface Stored extends ApplePayCertificate {
  private_key_sealed: SealedSecret;
}

export const sealContext = (scope: string, id: string) => ({
  projectId: scope,
  cardId: id,
  field: "setting:applepay-private-key" as const,
});

export function presentCertificate(certificate: ApplePayCertificate) {
  return {
    id: certificate.id,
    project_id: certificate.project_id,
    sandbox: certificate.sandbox,
    status: certificate.status,
    csr: certificate.csr,
    public_key_hash: certificate.public_key_hash,
    certificate: certificate.certificate,
    certificate_expires_at: certificate.certificate_expires_at,
    created_at: certificate.created_at,
    activated_at: certificate.activated_at,
  };
}

export function fromItem(item: Record<string, unknown>): Stored {
  const { pk, sk, type, ...certificate } = item;
  return certificate as unknown as Stored;
}

export async function readAll(scope: string): Promise<Stored[]> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": keys.applepayCertificates(scope) },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).filter((item) => item.type === ENTITY).map(fromItem);
}

export async function readOne(caller: Caller, id: string): Promise<Stored> {
  const { Item } = isId("applepayCertificate", id)
    ? await dynamo.send(
        new GetCommand({
          TableName: config.tableName,
          Key: keys.applepayCertificate(caller.projectId, id),
          ConsistentRead: true,
        }),
      )
    : { Item: undefined };
  if (Item?.type !== ENTITY) throw notFound("applepay-certificate", id);
  return fromItem(Item);
}

/** `GET /projects/applepay/alternative-merchant-certificates`: as the clients read it. */
export async function listCertificates(caller: Caller) {
  const all = (await readAll(caller.projectId)).sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    count: String(all.length),
    alternative_merchant_certificates: all.map(presentCertificate),
  };
}

export async function getCertificate(caller: Caller, id: string) {
  return presentCertificate(await readOne(caller, id));
}

/** `DELETE …/{id}`: the key pair is gone for good (tokens encrypted to it can no longer be opened). */
export async function deleteCertificate(caller: Caller, id: string): Promise<void> {
  await readOne(caller, id);
  const now = clock.now();
  try {
    await transactWrite([
      {
        Delete: {
          TableName: config.tableName,
          Key: keys.applepayCertificate(caller.projectId, id),
          ConditionExpression: "attribute_exists(pk)",
        },
      },
      ...activityWrite(
        caller,
        "applepay_certificate.deleted",
        `Apple Pay certificate ${id} deleted`,
        { type: "applepay_certificate", id },
        now,
      ),
    ]);
  } catch (error) {
    if (failedConditions(error)?.includes(0)) throw notFound("applepay-certificate", id);
    throw error;
  }
}
