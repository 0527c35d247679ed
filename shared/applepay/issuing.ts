import { activityWrite } from "../activities/activity.ts";
import { cardVault } from "../cards/vault.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { keys } from "../db/keys.ts";
import { failedConditions, transactWrite } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { conflict, invalidField } from "../http/errors.ts";
import { newId } from "../ids.ts";
import {
  ENTITY,
  MAX_CERTIFICATES,
  presentCertificate,
  readAll,
  readOne,
  type Stored,
  sealContext,
} from "./certificates.ts";
import { certificateKeyHash, newKeyPairAndCsr, readCertificate } from "./csr.ts";

/** Making an Apple Pay certificate's key pair and CSR, and taking the certificate Apple makes of it. */
const MAX_CERTIFICATE_LENGTH = 16_384;

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
  const made = newKeyPairAndCsr(caller.projectId, id);
  const now = clock.now();
  const stored: Stored = {
    id,
    project_id: caller.projectId,
    sandbox: caller.sandbox,
    status: "awaiting_certificate",
    csr: made.csr,
    public_key_hash: made.publicKeyHash,
    certificate: null,
    certificate_expires_at: null,
    created_at: now.toISOString(),
    activated_at: null,
    private_key_sealed: await cardVault().seal(made.privateKey, sealContext(caller.projectId, id)),
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

/** `PUT …/{id}` with `certificate`: Apple's certificate for this key pair, which makes it active. */
export async function activateCertificate(caller: Caller, id: string, body: Record<string, unknown>) {
  const current = await readOne(caller, id);
  const text = body.certificate;
  if (text === undefined || text === null || text === "") throw invalidField("certificate", "is required");
  if (typeof text !== "string") throw invalidField("certificate", "must be a string");
  if (text.length > MAX_CERTIFICATE_LENGTH) {
    throw invalidField("certificate", `must be at most ${MAX_CERTIFICATE_LENGTH} characters`);
  }
  const certificate = readCertificate(text.trim());
  if (!certificate) throw invalidField("certificate", "must be an X.509 certificate, in PEM or base64 DER");
  if (certificateKeyHash(certificate) !== current.public_key_hash) {
    throw invalidField(
      "certificate",
      "is not for this certificate's key pair: upload the certificate Apple made from its CSR",
    );
  }
  const now = clock.now();
  const validFrom = new Date(certificate.validFrom);
  const validTo = new Date(certificate.validTo);
  if (validFrom.getTime() > now.getTime() || validTo.getTime() <= now.getTime()) {
    throw invalidField(
      "certificate",
      `is not valid now (valid ${validFrom.toISOString()} to ${validTo.toISOString()})`,
    );
  }
  const next: Stored = {
    ...current,
    status: "active",
    certificate: certificate.toString(),
    certificate_expires_at: validTo.toISOString(),
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
