import "reflect-metadata";
import { createHash, webcrypto } from "node:crypto";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import * as x509 from "@peculiar/x509";
import { activityWrite } from "../activities/activity.ts";
import { cardVault, type SealedSecret } from "../cards/vault.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { failedConditions, transactWrite } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { conflict, invalidField, notFound } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";

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
 * Rotation: make a new one and activate it while the old one still works (a token names the key it
 * was encrypted to, by its public key's hash, so both open their tokens at once), then `DELETE` the
 * old one. Every change lands in the activity log.
 */
const ENTITY = "applepay_certificate";
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
/** Certificates an environment may hold at once: enough for a rotation, and a few domains' worth. */
export const MAX_CERTIFICATES = 10;
const MAX_CERTIFICATE_LENGTH = 16_384;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

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

interface Stored extends ApplePayCertificate {
  private_key_sealed: SealedSecret;
}

const sealContext = (scope: string, id: string) => ({
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

function fromItem(item: Record<string, unknown>): Stored {
  const { pk, sk, type, ...certificate } = item;
  return certificate as unknown as Stored;
}

async function readAll(scope: string): Promise<Stored[]> {
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

async function readOne(caller: Caller, id: string): Promise<Stored> {
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

const publicKeyHash = (spki: ArrayBuffer) => createHash("sha256").update(Buffer.from(spki)).digest("base64");

/** `POST …/alternative-merchant-certificates` (the clients send an empty body): a key pair and its CSR. */
export async function createCertificate(caller: Caller) {
  const existing = await readAll(caller.projectId);
  if (existing.length >= MAX_CERTIFICATES) {
    throw conflict(
      "request.applepay-certificate.too-many",
      `An environment holds at most ${MAX_CERTIFICATES} Apple Pay certificates: delete one first.`,
    );
  }
  const id = newId("applepayCertificate");
  const keyPair = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${caller.projectId}, OU=${id}`,
    keys: keyPair as Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[0]["keys"],
    signingAlgorithm: ALGORITHM,
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keyPair.privateKey)).toString("base64");
  const spki = await webcrypto.subtle.exportKey("spki", keyPair.publicKey);
  const now = clock.now();
  const stored: Stored = {
    id,
    project_id: caller.projectId,
    sandbox: caller.sandbox,
    status: "awaiting_certificate",
    csr: csr.toString("pem"),
    public_key_hash: publicKeyHash(spki),
    certificate: null,
    certificate_expires_at: null,
    created_at: now.toISOString(),
    activated_at: null,
    private_key_sealed: await cardVault().seal(pkcs8, sealContext(caller.projectId, id)),
  };
  await transactWrite([
    {
      Put: {
        TableName: config.tableName,
        Item: { ...keys.applepayCertificate(caller.projectId, id), type: ENTITY, ...stored },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    ...activityWrite(
      caller,
      "applepay_certificate.created",
      `Apple Pay certificate ${id} created: its CSR awaits Apple's certificate`,
      { type: "applepay_certificate", id },
      now,
    ),
  ]);
  return presentCertificate(stored);
}

/** The uploaded certificate, PEM or base64 DER; undefined when it is neither. */
function parseCertificate(text: string): x509.X509Certificate | undefined {
  try {
    return new x509.X509Certificate(text.includes("-----BEGIN") ? text : Buffer.from(text, "base64"));
  } catch {
    return undefined;
  }
}

/** `PUT …/{id}` with `certificate`: Apple's certificate for this key pair, which makes it active. */
export async function activateCertificate(caller: Caller, id: string, body: Record<string, unknown>) {
  const current = await readOne(caller, id);
  const text = body.certificate;
  if (text === undefined || text === null || text === "") throw invalidField("certificate", "is required");
  if (typeof text !== "string") throw invalidField("certificate", "must be a string");
  if (text.length > MAX_CERTIFICATE_LENGTH) {
    throw invalidField("certificate", `must be at most ${MAX_CERTIFICATE_LENGTH} characters`);
  }
  const certificate = parseCertificate(text.trim());
  if (!certificate) throw invalidField("certificate", "must be an X.509 certificate, in PEM or base64 DER");
  const spki = certificate.publicKey.rawData;
  if (publicKeyHash(spki) !== current.public_key_hash) {
    throw invalidField(
      "certificate",
      "is not for this certificate's key pair: upload the certificate Apple made from its CSR",
    );
  }
  const now = clock.now();
  if (certificate.notBefore.getTime() > now.getTime() || certificate.notAfter.getTime() <= now.getTime()) {
    throw invalidField(
      "certificate",
      `is not valid now (valid ${certificate.notBefore.toISOString()} to ${certificate.notAfter.toISOString()})`,
    );
  }
  const next: Stored = {
    ...current,
    status: "active",
    certificate: certificate.toString("pem"),
    certificate_expires_at: certificate.notAfter.toISOString(),
    activated_at: now.toISOString(),
  };
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: { ...keys.applepayCertificate(caller.projectId, id), type: ENTITY, ...next },
          // Unless deleted meanwhile, or given another certificate by a request that came first.
          ConditionExpression:
            "attribute_exists(pk) AND #status = :status AND (attribute_type(#certificate, :null) OR #certificate = :certificate)",
          ExpressionAttributeNames: { "#status": "status", "#certificate": "certificate" },
          ExpressionAttributeValues: {
            ":status": current.status,
            ":null": "NULL",
            ":certificate": current.certificate ?? "",
          },
        },
      },
      ...activityWrite(
        caller,
        "applepay_certificate.activated",
        `Apple Pay certificate ${id} activated (expires ${next.certificate_expires_at})`,
        { type: "applepay_certificate", id },
        now,
      ),
    ]);
  } catch (error) {
    if (failedConditions(error)?.includes(0)) {
      throw conflict(
        "request.applepay-certificate.changed",
        `Apple Pay certificate ${id} was changed meanwhile: read it again.`,
      );
    }
    throw error;
  }
  return presentCertificate(next);
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
