/**
 * Configuration from the environment, read once per container at first use; a missing variable
 * fails with its name. Read lazily so that a function which never touches the table (the 404
 * fallback) does not need the table's name.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

let tableName: string | undefined;

/**
 * Where the card vault's keys are. In AWS: `CARD_KEY_ID`, the KMS key that wraps each card's data
 * keys, and `CARD_FINGERPRINT_KEY_ID`, the KMS HMAC key of card fingerprints (given only to the
 * functions that tokenize). In the local stack and the tests: `CARD_KEY_FILE`, a JSON file holding
 * both keys, created on first use.
 */
export type CardKeySettings =
  | { kind: "kms"; keyId: string; fingerprintKeyId: string | undefined }
  | { kind: "file"; path: string };

let cardKeys: CardKeySettings | undefined;

function readCardKeys(): CardKeySettings {
  const keyId = process.env.CARD_KEY_ID;
  if (keyId)
    return { kind: "kms", keyId, fingerprintKeyId: process.env.CARD_FINGERPRINT_KEY_ID || undefined };
  const path = process.env.CARD_KEY_FILE;
  if (path) return { kind: "file", path };
  throw new Error(
    "Missing required environment variable CARD_KEY_ID (a KMS key, in AWS) or CARD_KEY_FILE (a local key file)",
  );
}

export const config = {
  get tableName(): string {
    tableName ??= required("TABLE_NAME");
    return tableName;
  },
  get cardKeys(): CardKeySettings {
    cardKeys ??= readCardKeys();
    return cardKeys;
  },
  /** Public base address of this API (3DS challenge pages are served under it). */
  get apiUrl(): string {
    return (process.env.API_URL ?? "http://localhost:3000").replace(/\/$/, "");
  },
  /**
   * Base address of the hosted checkout pages (invoice `url`): the API serves them itself, under
   * `/checkout`, unless `CHECKOUT_URL` names another address (a custom domain in front of it).
   */
  get checkoutUrl(): string {
    return (process.env.CHECKOUT_URL ?? `${this.apiUrl}/checkout`).replace(/\/$/, "");
  },
};
