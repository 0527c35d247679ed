import { createHash, generateKeyPairSync, type KeyObject, sign, X509Certificate } from "node:crypto";
import { CertificationRequest, CertificationRequestInfo } from "@peculiar/asn1-csr";
import { AsnConvert } from "@peculiar/asn1-schema";
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
} from "@peculiar/asn1-x509";

/**
 * The cryptography of Apple Pay merchant certificates: an EC P-256 key pair made by Node's crypto, its
 * certificate signing request (PKCS #10, encoded with the `@peculiar/asn1-*` schemas and signed
 * ECDSA with SHA-256 by Node), and the reading of the certificate Apple returns (Node's
 * `X509Certificate`). Only the functions that make or take a certificate load it.
 */
const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const COMMON_NAME = "2.5.4.3";
const ORGANIZATIONAL_UNIT = "2.5.4.11";

/** base64 SHA-256 of a public key's SubjectPublicKeyInfo: what an Apple Pay token's `publicKeyHash` names. */
export const publicKeyHash = (key: KeyObject) =>
  createHash("sha256")
    .update(key.export({ type: "spki", format: "der" }))
    .digest("base64");

const attribute = (type: string, value: string) =>
  new RelativeDistinguishedName([
    new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: value }) }),
  ]);

/** A new key pair and its CSR (PEM) naming `commonName` and `unit`; the private key as PKCS #8 base64. */
export function newKeyPairAndCsr(commonName: string, unit: string) {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const info = new CertificationRequestInfo({
    subject: new Name([attribute(COMMON_NAME, commonName), attribute(ORGANIZATIONAL_UNIT, unit)]),
    subjectPKInfo: AsnConvert.parse(publicKey.export({ type: "spki", format: "der" }), SubjectPublicKeyInfo),
  });
  const signature = sign("sha256", Buffer.from(AsnConvert.serialize(info)), {
    key: privateKey,
    dsaEncoding: "der",
  });
  const request = new CertificationRequest({
    certificationRequestInfo: info,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    signature: new Uint8Array(signature).buffer,
  });
  const der = Buffer.from(AsnConvert.serialize(request));
  const csr = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64").replace(/.{1,64}/g, "$&\n")}-----END CERTIFICATE REQUEST-----\n`;
  return {
    csr,
    publicKeyHash: publicKeyHash(publicKey),
    privateKey: privateKey.export({ type: "pkcs8", format: "der" }).toString("base64"),
  };
}

/** An uploaded certificate, PEM or base64 DER; undefined when it is neither. */
export function readCertificate(text: string): X509Certificate | undefined {
  try {
    return new X509Certificate(text.includes("-----BEGIN") ? text : Buffer.from(text, "base64"));
  } catch {
    return undefined;
  }
}

/** The certificate's public key hash, as `publicKeyHash` gives it for our own key. */
export const certificateKeyHash = (certificate: X509Certificate) => publicKeyHash(certificate.publicKey);
