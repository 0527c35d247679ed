import type { KMSClient } from "@aws-sdk/client-kms";
import type { MasterKey } from "./vault.ts";

type KmsSdk = typeof import("@aws-sdk/client-kms");

/**
 * The vault's master key in AWS: `keyId`, a symmetric KMS key, wraps the data keys
 * (GenerateDataKey to seal, Decrypt to open) under the secret's encryption context, and
 * `fingerprintKeyId`, an HMAC_256 KMS key, computes fingerprints (GenerateMac). Neither key ever
 * leaves KMS. Functions get only the permissions their route declares (`lib/topology.ts`).
 *
 * The KMS SDK is loaded, and its client created, on first use, once per container: the many
 * functions that reach this module through shared code without ever touching a card do not pay
 * for loading it at cold start.
 */
export function kmsMasterKey(keyId: string, fingerprintKeyId: string | undefined): MasterKey {
  let loaded: Promise<{ sdk: KmsSdk; kms: KMSClient }> | undefined;
  const kms = () => {
    loaded ??= import("@aws-sdk/client-kms").then((sdk) => ({ sdk, kms: new sdk.KMSClient({}) }));
    return loaded;
  };
  return {
    kind: "kms",
    async newDataKey(context) {
      const { sdk, kms: client } = await kms();
      const { Plaintext, CiphertextBlob } = await client.send(
        new sdk.GenerateDataKeyCommand({
          KeyId: keyId,
          KeySpec: "AES_256",
          EncryptionContext: context.fields,
        }),
      );
      if (!Plaintext || !CiphertextBlob) throw new Error("KMS GenerateDataKey returned no data key");
      return { plaintext: Buffer.from(Plaintext), wrapped: Buffer.from(CiphertextBlob) };
    },
    async unwrap(wrapped, context) {
      const { sdk, kms: client } = await kms();
      const { Plaintext } = await client.send(
        new sdk.DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: context.fields }),
      );
      if (!Plaintext) throw new Error("KMS Decrypt returned no plaintext");
      return Buffer.from(Plaintext);
    },
    async mac(message) {
      if (!fingerprintKeyId) {
        throw new Error("Missing required environment variable CARD_FINGERPRINT_KEY_ID");
      }
      const { sdk, kms: client } = await kms();
      const { Mac } = await client.send(
        new sdk.GenerateMacCommand({
          KeyId: fingerprintKeyId,
          MacAlgorithm: "HMAC_SHA_256",
          Message: message,
        }),
      );
      if (!Mac) throw new Error("KMS GenerateMac returned no MAC");
      return Buffer.from(Mac);
    },
  };
}
