import { type Card, presentCard } from "../cards/card.ts";
import type { Caller } from "../http/auth.ts";
import type { ThreeDSExchange } from "../three-d-s/exchange.ts";
import type { TokenFields } from "./schema.ts";

/**
 * `pending`: no source yet, or one is being verified. `not-requested`: created with a card and no
 * verification. `success` / `failed`: the card was verified, or refused by the gateway.
 */
export type VerificationStatus = "success" | "pending" | "failed" | "not-requested" | "unknown";

/**
 * A customer token as stored, an item of its customer's partition. Its card is read from the card's
 * own item when presented, so a card anonymized since shows anonymized and makes the token unusable.
 */
export interface Token {
  id: string;
  customer_id: string;
  project_id: string;
  sandbox: boolean;
  /** The configuration that verified the card; null until one did. */
  gateway_configuration_id: string | null;
  card_id: string | null;
  /** The API's `type`: `card` (the entity type attribute of every item is `type`). */
  token_type: "card";
  verification_status: VerificationStatus;
  metadata: Record<string, string>;
  description: string | null;
  return_url: string | null;
  cancel_url: string | null;
  webhook_url: string | null;
  created_at: string;
  updated_at: string;
  /** The 3DS exchange of the card's verification, when the issuer asked for the cardholder. */
  three_d_s?: TokenThreeDS | null;
}

/**
 * A verification's 3DS exchange: the card it verifies and, once the verification ended, how (what
 * a replayed answer to its last round is answered).
 */
export interface TokenThreeDS extends ThreeDSExchange {
  card_id: string;
  ended: null | { status: "success" } | { status: "failed"; error_type: string; message: string };
}

/** What a verification (or its absence) leaves on a new token. */
export interface Verification {
  status: VerificationStatus;
  cardId: string | null;
  gatewayConfigurationId: string | null;
}

export function newToken(
  caller: Caller,
  id: string,
  customerId: string,
  fields: TokenFields,
  verification: Verification,
  now: Date,
): Token {
  const at = now.toISOString();
  return {
    id,
    customer_id: customerId,
    project_id: caller.projectId,
    sandbox: caller.sandbox,
    gateway_configuration_id: verification.gatewayConfigurationId,
    card_id: verification.cardId,
    token_type: "card",
    verification_status: verification.status,
    metadata: fields.metadata ?? {},
    description: fields.description ?? null,
    return_url: fields.return_url ?? null,
    cancel_url: fields.cancel_url ?? null,
    webhook_url: fields.webhook_url ?? null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Whether a payment may use the token: a card is attached, was not refused by a verification (nor is
 * being verified), and is not anonymized. Payments check this on a consistent read, then put the
 * token's and the card's conditions (`cardUsableCheck`) in the transaction that records the payment.
 */
export function isChargeable(token: Token, card: Card | null): boolean {
  return (
    (token.verification_status === "success" || token.verification_status === "not-requested") &&
    card !== null &&
    card.id === token.card_id &&
    card.anonymized_at === null
  );
}

/** The customer token resource as the API returns it (the reference's Customer token shape). */
export function presentToken(token: Token, card: Card | null, defaultTokenId: string | null) {
  return {
    id: token.id,
    customer_id: token.customer_id,
    gateway_configuration_id: token.gateway_configuration_id,
    card: card ? presentCard(card) : null,
    card_id: token.card_id,
    type: token.token_type,
    metadata: token.metadata,
    is_default: token.id === defaultTokenId,
    is_chargeable: isChargeable(token, card),
    verification_status: token.verification_status,
    return_url: token.return_url,
    cancel_url: token.cancel_url,
    webhook_url: token.webhook_url,
    description: token.description,
    created_at: token.created_at,
  };
}

export type PresentedToken = ReturnType<typeof presentToken>;
