import { spawn } from "node:child_process";
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KMSClient } from "@aws-sdk/client-kms";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { envelopeVault, type SealContext, type SealedSecret, VaultError } from "../../shared/cards/vault.ts";
import { fileMasterKey } from "../../shared/cards/vault-file.ts";
import { kmsMasterKey } from "../../shared/cards/vault-kms.ts";

const directory = mkdtempSync(join(tmpdir(), "card-vault-test-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let files = 0;
const freshVault = () => {
  const path = join(directory, `keys-${files++}.json`);
  return { path, vault: envelopeVault(fileMasterKey(path)) };
};

const NUMBER = "4242424242424242";
const context: SealContext = { projectId: "test-proj_1", cardId: "card_1", field: "number" };

/** Flips one bit of a base64 part of an envelope. */
function flipped(sealed: SealedSecret, part: "key" | "iv" | "tag" | "data"): SealedSecret {
  const bytes = Buffer.from(sealed[part], "base64");
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
  return { ...sealed, [part]: bytes.toString("base64") };
}

describe("the card vault (local key file)", () => {
  it("opens what it sealed, and seals the same secret differently every time", async () => {
    const { vault } = freshVault();
    const first = await vault.seal(NUMBER, context);
    const second = await vault.seal(NUMBER, context);
    expect(await vault.open(first, context)).toBe(NUMBER);
    expect(await vault.open(second, context)).toBe(NUMBER);
    expect(first.key).not.toBe(second.key);
    expect(first.data).not.toBe(second.data);
    expect(JSON.stringify(first)).not.toContain(NUMBER);
    expect(first).toMatchObject({ v: 1, kek: "file" });
  });

  it.each(["key", "iv", "tag", "data"] as const)("refuses an envelope whose %s was altered", async (part) => {
    const { vault } = freshVault();
    const sealed = await vault.seal(NUMBER, context);
    await expect(vault.open(flipped(sealed, part), context)).rejects.toThrow(VaultError);
  });

  it("refuses to open a secret for another card, project or field than it was sealed for", async () => {
    const { vault } = freshVault();
    const sealed = await vault.seal(NUMBER, context);
    for (const other of [
      { ...context, cardId: "card_2" },
      { ...context, projectId: "proj_1" },
      { ...context, field: "cvc" as const },
    ]) {
      await expect(vault.open(sealed, other)).rejects.toThrow(VaultError);
    }
  });

  it("cannot open what another key file sealed, and never puts the secret in its error", async () => {
    const sealed = await freshVault().vault.seal(NUMBER, context);
    const error = await freshVault()
      .vault.open(sealed, context)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VaultError);
    expect(String((error as Error).message)).not.toContain(NUMBER);
  });

  it("fingerprints a card alike within a project and differently across projects and key files", async () => {
    const { vault } = freshVault();
    const print = await vault.fingerprint("proj_A", NUMBER);
    expect(print).toMatch(/^[0-9a-f]{64}$/);
    expect(await vault.fingerprint("proj_A", NUMBER)).toBe(print);
    expect(await vault.fingerprint("proj_B", NUMBER)).not.toBe(print);
    expect(await vault.fingerprint("proj_A", "5555555555554444")).not.toBe(print);
    expect(await freshVault().vault.fingerprint("proj_A", NUMBER)).not.toBe(print);
  });

  it("creates its key file readable by its owner only, and keeps using it", async () => {
    const { path, vault } = freshVault();
    const sealed = await vault.seal(NUMBER, context);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const keys = JSON.parse(readFileSync(path, "utf8"));
    expect(keys).toEqual({ version: 1, master_key: expect.any(String), hmac_key: expect.any(String) });
    expect(await envelopeVault(fileMasterKey(path)).open(sealed, context)).toBe(NUMBER);
  });

  it("refuses a key file it did not write, naming it", async () => {
    const path = join(directory, "not-keys.json");
    writeFileSync(path, '{"version": 1, "master_key": "c2hvcnQ="}');
    await expect(envelopeVault(fileMasterKey(path)).seal(NUMBER, context)).rejects.toThrow(path);
  });

  it("lets processes that start at once agree on one key file", async () => {
    const path = join(directory, "shared-keys.json");
    const module = new URL("../../shared/cards/vault-file.ts", import.meta.url).href;
    const script = `
      const { fileMasterKey } = await import(${JSON.stringify(module)});
      const mac = await fileMasterKey(process.argv[1]).mac(Buffer.from("x"));
      process.stdout.write(mac.toString("hex"));
    `;
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            ["--import", "tsx", "--input-type=module", "--eval", script, path],
            {
              stdio: ["ignore", "pipe", "inherit"],
            },
          );
          let output = "";
          child.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString("utf8");
          });
          child.once("error", reject);
          child.once("exit", (code) => (code === 0 ? resolve(output) : reject(new Error(`exit ${code}`))));
        }),
    );
    const macs = await Promise.all(runs);
    expect(new Set(macs).size).toBe(1);
  });
});

describe("the card vault (AWS KMS)", () => {
  /** A stand-in for KMS: wraps data keys with a local key, bound to the encryption context as KMS does. */
  function fakeKms() {
    const master = randomBytes(32);
    const calls: { command: string; input: Record<string, unknown> }[] = [];
    const bind = (context: unknown) => Buffer.from(JSON.stringify(context));
    const send = async (command: { input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      calls.push({ command: name, input: command.input });
      if (name === "GenerateDataKeyCommand") {
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const cipher = createCipheriv("aes-256-gcm", master, iv).setAAD(
          bind(command.input.EncryptionContext),
        );
        const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        return { Plaintext: plaintext, CiphertextBlob: Buffer.concat([iv, cipher.getAuthTag(), sealed]) };
      }
      if (name === "DecryptCommand") {
        const blob = Buffer.from(command.input.CiphertextBlob as Uint8Array);
        const decipher = createDecipheriv("aes-256-gcm", master, blob.subarray(0, 12));
        decipher.setAAD(bind(command.input.EncryptionContext)).setAuthTag(blob.subarray(12, 28));
        return { Plaintext: Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]) };
      }
      if (name === "GenerateMacCommand") {
        return {
          Mac: createHmac("sha256", master)
            .update(command.input.Message as Uint8Array)
            .digest(),
        };
      }
      throw new Error(`unexpected ${name}`);
    };
    vi.spyOn(KMSClient.prototype, "send").mockImplementation(send as unknown as KMSClient["send"]);
    return calls;
  }

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("wraps each secret's data key with the card key under the secret's encryption context", async () => {
    const calls = fakeKms();
    const vault = envelopeVault(kmsMasterKey("arn:card-key", "arn:fingerprint-key"));
    const sealed = await vault.seal(NUMBER, context);
    expect(sealed.kek).toBe("kms");
    expect(await vault.open(sealed, context)).toBe(NUMBER);
    const encryptionContext = { project_id: "test-proj_1", card_id: "card_1", field: "number" };
    expect(calls).toEqual([
      {
        command: "GenerateDataKeyCommand",
        input: { KeyId: "arn:card-key", KeySpec: "AES_256", EncryptionContext: encryptionContext },
      },
      {
        command: "DecryptCommand",
        input: {
          KeyId: "arn:card-key",
          CiphertextBlob: expect.anything(),
          EncryptionContext: encryptionContext,
        },
      },
    ]);
    await expect(vault.open(sealed, { ...context, cardId: "card_2" })).rejects.toThrow(VaultError);
  });

  it("fingerprints with the HMAC key, and says which variable is missing without one", async () => {
    const calls = fakeKms();
    const print = await envelopeVault(kmsMasterKey("arn:card-key", "arn:fingerprint-key")).fingerprint(
      "proj_A",
      NUMBER,
    );
    expect(print).toMatch(/^[0-9a-f]{64}$/);
    expect(calls).toEqual([
      {
        command: "GenerateMacCommand",
        input: { KeyId: "arn:fingerprint-key", MacAlgorithm: "HMAC_SHA_256", Message: expect.anything() },
      },
    ]);
    await expect(
      envelopeVault(kmsMasterKey("arn:card-key", undefined)).fingerprint("proj_A", NUMBER),
    ).rejects.toThrow("CARD_FINGERPRINT_KEY_ID");
  });

  it("cannot open a secret sealed with the local key file", async () => {
    fakeKms();
    const sealed = await freshVault().vault.seal(NUMBER, context);
    await expect(
      envelopeVault(kmsMasterKey("arn:card-key", undefined)).open(sealed, context),
    ).rejects.toThrow(VaultError);
  });
});
