import { clock } from "../clock.ts";
import type { CheckResults } from "../gateways/connector.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField } from "../http/errors.ts";
import type { CardScheme } from "./card-number.ts";
import { iin, lastDigits } from "./card-number.ts";
import type { CardInput } from "./schema.ts";
import type { SealedSecret } from "./vault.ts";

/** Card checks: `pending` until the first authorization or verification reports a result. */
export type CardCheck = "pending" | "unavailable" | "unknown" | "failed" | "passed";

/**
 * A card token as stored, without its secrets: what may be shown (the first 6 and last 4 digits,
 * scheme, expiry, a keyed fingerprint). `anonymized_at` is set by `DELETE /cards/{id}`, which also
 * drops the secrets, the name and the metadata; such a card can no longer be used to pay.
 */
export interface Card {
  id: string;
  project_id: string;
  sandbox: boolean;
  scheme: CardScheme | null;
  co_scheme: CardScheme | null;
  preferred_scheme: CardScheme | null;
  /** `credit`, `debit` or null; null without a BIN table to tell (the sandbox has none). */
  card_type: "credit" | "debit" | null;
  bank_name: string | null;
  brand: string | null;
  category: string | null;
  iin: string;
  last_4_digits: string;
  exp_month: number;
  exp_year: number;
  cvc_check: CardCheck;
  avs_check: CardCheck;
  name: string | null;
  fingerprint: string;
  metadata: Record<string, string>;
  created_at: string;
  /** Set by every change of the card (absent on cards stored before it was kept: `created_at`). */
  updated_at?: string;
  /**
   * The card scheme's id of the first customer-initiated payment with this card (from the provider
   * that made it): merchant-initiated payments send it, as the schemes require. Never shown.
   */
  network_transaction_id?: string | null;
  /**
   * When authorizations of this card were declined since its last approval (business time), for the
   * card schemes' retry rules (`shared/routing/scheme-rules.ts`). Never shown.
   */
  declined_at?: string[];
  /** A Mastercard merchant advice code that forbids further attempts (03, 21), once met. Never shown. */
  merchant_advice_block?: { code: string; at: string } | null;
  anonymized_at: string | null;
}

/**
 * A card's secrets, each sealed on its own by the card vault (own data key) and stored beside the
 * card, never in clear and never logged.
 *
 * The CVC must not be kept beyond the first authorization or verification it was given for
 * (PCI DSS 3.3.1.2). It is sealed apart from the number so it can be dropped alone: the code that
 * runs that first authorization or verification removes `cvc_sealed` in the same write that records
 * its outcome (`cardCheckedWrite` in `store.ts`), whatever the outcome. Later payments go without it.
 */
export interface CardSecrets {
  number_sealed: SealedSecret | null;
  cvc_sealed: SealedSecret | null;
}

export function newCard(caller: Caller, id: string, input: CardInput, fingerprint: string, now: Date): Card {
  return {
    id,
    project_id: caller.projectId,
    sandbox: caller.sandbox,
    scheme: input.scheme,
    co_scheme: null,
    preferred_scheme: input.preferredScheme,
    card_type: null,
    bank_name: null,
    brand: null,
    category: null,
    iin: iin(input.number),
    last_4_digits: lastDigits(input.number),
    exp_month: input.expMonth,
    exp_year: input.expYear,
    cvc_check: input.cvc === null ? "unavailable" : "pending",
    avs_check: "unavailable",
    name: input.name,
    fingerprint,
    metadata: input.metadata,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    anonymized_at: null,
  };
}

/** The card once an authorization or verification reported `checks` (see `cardCheckedWrite`). */
export function withChecks(card: Card, checks: CheckResults): Card {
  return {
    ...card,
    avs_check: checks.avs,
    cvc_check: checks.cvc === "unavailable" ? card.cvc_check : checks.cvc,
  };
}

/** Whether a card may still be used as a payment source: not anonymized, its number still sealed. */
export function isUsable(card: Card, secrets: CardSecrets): boolean {
  return card.anonymized_at === null && secrets.number_sealed !== null;
}

/** The card resource as the API returns it (the reference's Card shape). Never any secret. */
export function presentCard(card: Card, now: Date = clock.now()) {
  return {
    id: card.id,
    project_id: card.project_id,
    scheme: card.scheme ?? UNKNOWN,
    co_scheme: card.co_scheme,
    preferred_scheme: card.preferred_scheme,
    type: card.card_type ?? UNKNOWN,
    bank_name: card.bank_name,
    brand: card.brand,
    category: card.category,
    iin: card.iin,
    last_4_digits: card.last_4_digits,
    exp_month: card.exp_month,
    exp_year: card.exp_year,
    expires_soon: expiresSoon(card, now),
    cvc_check: card.cvc_check,
    avs_check: card.avs_check,
    name: card.name,
    fingerprint: card.fingerprint,
    metadata: card.metadata,
    sandbox: card.sandbox,
    created_at: card.created_at,
    updated_at: card.updated_at ?? card.created_at,
  };
}

/**
 * What the card answer says when no rule tells a card's scheme or type (no BIN table here): the iOS
 * library decodes both as required strings, so they are never null.
 */
const UNKNOWN = "unknown";

/** Months ahead in which an expiry counts as soon: the card expires this month or in the next two. */
const EXPIRES_SOON_MONTHS = 2;

/** Whether the card's last valid month (its expiry) is at most `EXPIRES_SOON_MONTHS` away (or past). */
export function expiresSoon(card: Pick<Card, "exp_month" | "exp_year">, now: Date): boolean {
  const monthsLeft =
    card.exp_year * 12 + (card.exp_month - 1) - (now.getUTCFullYear() * 12 + now.getUTCMonth());
  return monthsLeft <= EXPIRES_SOON_MONTHS;
}

export type PresentedCard = ReturnType<typeof presentCard>;

/**
 * The scheme a payment or verification goes through: the payer's choice (`preferred_scheme`) when
 * it is one of the card's schemes (a 400 naming the field otherwise), else the card's preferred
 * scheme, else its scheme.
 */
export function routingScheme(card: Card, preferred: string | null): string | null {
  if (preferred === null) return card.preferred_scheme ?? card.scheme;
  const schemes = [card.scheme, card.co_scheme].filter((scheme) => scheme !== null);
  if (!schemes.includes(preferred as CardScheme)) {
    throw invalidField(
      "preferred_scheme",
      `must be one of the card's schemes (${schemes.join(", ") || "none is known"})`,
    );
  }
  return preferred;
}
