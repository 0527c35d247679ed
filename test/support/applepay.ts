import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/**
 * The certificate "Apple" makes from an Apple Pay CSR: the CSR's public key, signed by a CA the test
 * makes (valid `validDays` from `notBefore`). Throws when the CSR's own signature does not verify.
 */
export async function appleCertificateFor(csrPem: string, validDays = 365, notBefore = new Date()) {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  if (!(await csr.verify())) throw new Error("The CSR's signature does not verify");
  const ca = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: "0a1b",
    subject: "CN=merchant.com.example, OU=Apple Pay Payment Processing",
    issuer: "CN=Test Apple Worldwide Developer Relations CA",
    notBefore,
    notAfter: new Date(notBefore.getTime() + validDays * 24 * 3600 * 1000),
    signingAlgorithm: ALGORITHM,
    publicKey: csr.publicKey,
    signingKey: ca.privateKey,
  });
  return certificate.toString("pem");
}

/** The public key algorithm of a CSR. */
export const csrKeyAlgorithm = (csrPem: string) =>
  new x509.Pkcs10CertificateRequest(csrPem).publicKey.algorithm;
