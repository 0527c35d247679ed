import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { config } from "../config.ts";
import { fileMasterKey } from "./vault-file.ts";
import { kmsMasterKey } from "./vault-kms.ts";

/**
 * The card vault: the one way card numbers and CVCs are kept, and the keyed fingerprint of a card.
 *
 * Envelope encryption: every secret gets a fresh 256-bit data key, encrypts with AES-256-GCM, and
 * keeps the data key only wrapped by the master key (a KMS key in AWS, a key file locally). The
 * data and the wrapped key are bound to what they belong to (project, card, field) as additional
 * authenticated data and as the KMS encryption context, so a sealed secret copied onto another card
 * or field does not open. Since each secret has its own data key, dropping a sealed secret (the CVC
 * after its first use) destroys the only copy of its key.
 */
export interface CardVault {
  seal(plaintext: string, context: SealContext): Promise<SealedSecret>;
  /** The plaintext; throws when the envelope was altered or belongs to another context. */
  open(sealed: SealedSecret, context: SealContext): Promise<string>;
  /**
   * The card's fingerprint: HMAC-SHA256 under a key of this deployment, salted with the root project
   * id, so that one card has one fingerprint within a project (sandbox and live alike) and
   * fingerprints of two projects never correlate. Hex, 64 characters.
   */
  fingerprint(rootProjectId: string, cardNumber: string): Promise<string>;
}

/**
 * What a sealed secret belongs to; the same context is needed to open it. Besides cards, the vault
 * keeps the secret settings of gateway configurations (a provider's API key): `cardId` is then the
 * configuration's id and `field` `setting:<name>`.
 */
export interface SealContext {
  /** The environment project id that owns the secret. */
  projectId: string;
  cardId: string;
  field: "number" | "cvc" | `setting:${string}`;
}

/** A secret as stored: every part base64. */
export interface SealedSecret {
  v: 1;
  /** Which master key wrapped the data key. */
  kek: MasterKeyKind;
  /** The data key, wrapped by the master key. */
  key: string;
  iv: string;
  tag: string;
  data: string;
}

export type MasterKeyKind = "kms" | "file";

/** An encryption context: as KMS takes it (`fields`), and as authenticated data for AES-GCM (`bytes`). */
export interface BoundContext {
  fields: Record<string, string>;
  bytes: Buffer;
}

/** The master key behind the vault: AWS KMS, or a local key file. */
export interface MasterKey {
  readonly kind: MasterKeyKind;
  /** A fresh 256-bit data key, in clear and wrapped (bound to `context`). */
  newDataKey(context: BoundContext): Promise<{ plaintext: Buffer; wrapped: Buffer }>;
  unwrap(wrapped: Buffer, context: BoundContext): Promise<Buffer>;
  /** HMAC-SHA256 of `message` under the deployment's fingerprint key. */
  mac(message: Buffer): Promise<Buffer>;
}

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;

/** A sealed secret could not be opened. It never carries any part of the secret. */
export class VaultError extends Error {
  override name = "VaultError";
}

/** The encryption context of a secret: what KMS binds the data key to, and the AES-GCM additional data. */
export function encryptionContext(context: SealContext): BoundContext {
  const fields = { card_id: context.cardId, field: context.field, project_id: context.projectId };
  return { fields, bytes: Buffer.from(JSON.stringify(Object.entries(fields)), "utf8") };
}

export function envelopeVault(master: MasterKey): CardVault {
  return {
    async seal(plaintext, context) {
      const bound = encryptionContext(context);
      const dataKey = await master.newDataKey(bound);
      try {
        const iv = randomBytes(IV_BYTES);
        const cipher = createCipheriv(ALGORITHM, dataKey.plaintext, iv);
        cipher.setAAD(bound.bytes);
        const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
        return {
          v: 1,
          kek: master.kind,
          key: dataKey.wrapped.toString("base64"),
          iv: iv.toString("base64"),
          tag: cipher.getAuthTag().toString("base64"),
          data: data.toString("base64"),
        };
      } finally {
        dataKey.plaintext.fill(0);
      }
    },

    async open(sealed, context) {
      if (sealed.v !== 1 || sealed.kek !== master.kind) {
        throw new VaultError(
          `A secret sealed with a ${sealed.kek} key cannot be opened with a ${master.kind} key`,
        );
      }
      const bound = encryptionContext(context);
      let dataKey: Buffer | undefined;
      try {
        dataKey = await master.unwrap(Buffer.from(sealed.key, "base64"), bound);
        const decipher = createDecipheriv(ALGORITHM, dataKey, Buffer.from(sealed.iv, "base64"));
        decipher.setAAD(bound.bytes);
        decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
        const plaintext = Buffer.concat([
          decipher.update(Buffer.from(sealed.data, "base64")),
          decipher.final(),
        ]);
        return plaintext.toString("utf8");
      } catch (error) {
        // Altered data, a wrong context, or the master key refusing: the cause says which.
        throw new VaultError(`The sealed ${context.field} of card ${context.cardId} could not be opened`, {
          cause: error,
        });
      } finally {
        dataKey?.fill(0);
      }
    },

    async fingerprint(rootProjectId, cardNumber) {
      const mac = await master.mac(Buffer.from(`${rootProjectId}\n${cardNumber}`, "utf8"));
      return mac.toString("hex");
    },
  };
}

let vault: CardVault | undefined;

/** The vault of this container, from its configuration (`shared/config.ts`), made once. */
export function cardVault(): CardVault {
  if (!vault) {
    const settings = config.cardKeys;
    vault = envelopeVault(
      settings.kind === "kms"
        ? kmsMasterKey(settings.keyId, settings.fingerprintKeyId)
        : fileMasterKey(settings.path),
    );
  }
  return vault;
}
