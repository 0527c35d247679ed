import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { csrKeyAlgorithm, appleCertificateFor as signedBy } from "../support/applepay.ts";

/**
 * Issue 21: Apple Pay merchant certificates whose key pair we make and hold: the CSR goes to Apple,
 * Apple's certificate comes back, and a rotation keeps one working throughout. "Apple" here is a CA
 * the test makes, signing the CSR's public key as Apple signs it.
 */
const local = useInProcessApi("Apple Pay certificates test");
const PATH = "/projects/applepay/alternative-merchant-certificates";

async function environment(name = "Apple Pay") {
  const project = await createProject(name);
  return api(local.url, project.sandbox);
}

describe("Apple Pay merchant certificates", () => {
  it("make a key pair and its CSR, take Apple's certificate for it, and rotate without a gap", async () => {
    const client = await environment();
    const empty = await client.get(PATH);
    expect(empty.body).toEqual({
      success: true,
      applepay_certificates: { count: "0", alternative_merchant_certificates: [] },
    });

    // The clients send an empty body.
    const made = await client.post(PATH, "", { contentType: "application/json" });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const first = made.body.alternative_merchant_certificate;
    expect(first).toMatchObject({
      id: expect.stringMatching(/^apc_/),
      status: "awaiting_certificate",
      csr: expect.stringContaining("-----BEGIN CERTIFICATE REQUEST-----"),
      certificate: null,
    });
    expect(made.text).not.toMatch(/private|sealed|PRIVATE KEY/);
    expect(csrKeyAlgorithm(first.csr)).toMatchObject({ name: "ECDSA", namedCurve: "P-256" });

    const listed = await client.get(PATH);
    expect(listed.body.applepay_certificates).toMatchObject({
      count: "1",
      alternative_merchant_certificates: [{ id: first.id }],
    });

    const pem = await signedBy(first.csr);
    const activated = await client.put(`${PATH}/${first.id}`, { certificate: pem });
    expect(activated.status, JSON.stringify(activated.body)).toBe(200);
    expect(activated.body.alternative_merchant_certificate).toMatchObject({
      status: "active",
      certificate: expect.stringContaining("-----BEGIN CERTIFICATE-----"),
      certificate_expires_at: expect.any(String),
    });

    // Rotation: a second one active beside the first, then the first deleted.
    const second = (await client.post(PATH, {})).body.alternative_merchant_certificate;
    expect(second.public_key_hash).not.toBe(first.public_key_hash);
    // base64 DER is taken as well as PEM.
    const der = (await signedBy(second.csr)).replace(/-----[A-Z ]+-----|\s/g, "");
    expect((await client.put(`${PATH}/${second.id}`, { certificate: der })).status).toBe(200);
    const both = (await client.get(PATH)).body.applepay_certificates.alternative_merchant_certificates;
    expect(both.map((certificate: { status: string }) => certificate.status)).toEqual(["active", "active"]);
    const deleted = await client.del(`${PATH}/${first.id}`);
    expect(deleted.body).toEqual({ success: true });
    expect((await client.get(PATH)).body.applepay_certificates).toMatchObject({
      count: "1",
      alternative_merchant_certificates: [{ id: second.id, status: "active" }],
    });
    expect((await client.get(`${PATH}/${first.id}`)).status).toBe(404);

    const logged = (await client.get("/activities")).body.activities.map(
      (entry: { type: string }) => entry.type,
    );
    expect(logged).toEqual([
      "applepay_certificate.deleted",
      "applepay_certificate.activated",
      "applepay_certificate.created",
      "applepay_certificate.activated",
      "applepay_certificate.created",
    ]);
  });

  it("refuse a certificate of another key pair, one not valid now, or not a certificate, naming the field", async () => {
    const client = await environment();
    const mine = (await client.post(PATH, {})).body.alternative_merchant_certificate;
    const other = (await client.post(PATH, {})).body.alternative_merchant_certificate;
    const cases = [
      await signedBy(other.csr),
      await signedBy(mine.csr, 30, new Date(Date.now() - 60 * 24 * 3600 * 1000)),
      "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----",
      "",
    ];
    for (const certificate of cases) {
      const refused = await client.put(`${PATH}/${mine.id}`, { certificate });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.invalid_fields).toEqual([expect.objectContaining({ name: "certificate" })]);
    }
    expect((await client.get(`${PATH}/${mine.id}`)).body.alternative_merchant_certificate.status).toBe(
      "awaiting_certificate",
    );
  });

  it("are the environment's own: another project's answer 404 on every route", async () => {
    const mine = await environment("Mine");
    const theirs = await environment("Theirs");
    const certificate = (await theirs.post(PATH, {})).body.alternative_merchant_certificate;
    expect((await mine.get(`${PATH}/${certificate.id}`)).status).toBe(404);
    expect((await mine.put(`${PATH}/${certificate.id}`, { certificate: "x" })).status).toBe(404);
    expect((await mine.del(`${PATH}/${certificate.id}`)).status).toBe(404);
    expect((await mine.get(PATH)).body.applepay_certificates.count).toBe("0");
    expect((await theirs.get(`${PATH}/${certificate.id}`)).status).toBe(200);
  });
});
