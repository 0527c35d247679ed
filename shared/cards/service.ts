import type { PageRequest } from "../db/listing.ts";
import type { TransactItem } from "../db/transactions.ts";
import type { CardCredentials } from "../gateways/connector.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import type { Input } from "../http/input.ts";
import { isId, newId } from "../ids.ts";
import { type Card, type CardSecrets, isUsable, newCard, type PresentedCard, presentCard } from "./card.ts";
import { normalizeCardNumber, schemeOfIin } from "./card-number.ts";
import { parseCardChange, parseCardInput } from "./schema.ts";
import { anonymizeCard, changeCard, findCard, insertCard, listCards } from "./store.ts";
import { cardVault } from "./vault.ts";

/**
 * Tokenizes a card: validates it, seals its number and CVC (each with its own data key), computes
 * its fingerprint, and stores it; `commit` receives the presented card and returns the writes that
 * must commit with it (the stored answer of an idempotent request).
 */
export async function tokenizeCard(
  caller: Caller,
  input: Input,
  commit: (presented: PresentedCard) => TransactItem[],
  now = new Date(),
): Promise<PresentedCard> {
  const card = parseCardInput(input, now);
  const id = newId("card");
  const vault = cardVault();
  const context = { projectId: caller.projectId, cardId: id };
  const [numberSealed, cvcSealed, fingerprint] = await Promise.all([
    vault.seal(card.number, { ...context, field: "number" }),
    card.cvc === null ? null : vault.seal(card.cvc, { ...context, field: "cvc" }),
    vault.fingerprint(caller.environment.root_project_id, card.number),
  ]);
  const stored = newCard(caller, id, card, fingerprint, now);
  const presented = presentCard(stored);
  await insertCard(stored, { number_sealed: numberSealed, cvc_sealed: cvcSealed }, commit(presented));
  return presented;
}

/**
 * What identifies a `POST /cards` request for its `Idempotency-Key`. The stored request fingerprint
 * is a plain SHA-256, which must never cover a card number or CVC (a hash of a PAN must be keyed,
 * PCI DSS 3.5.1.1; a CVC has too few values to hide in any hash): the number is replaced by its keyed
 * fingerprint, and the CVC left out, so a retry with the same key and card replays the first answer.
 */
export async function cardIdempotencyParameters(caller: Caller, query: Input, body: Input): Promise<unknown> {
  const { number, cvc, cvc2, ...rest } = body;
  const digits = typeof number === "string" ? normalizeCardNumber(number) : undefined;
  const numberFingerprint = digits
    ? await cardVault().fingerprint(caller.environment.root_project_id, digits)
    : undefined;
  return {
    query,
    body: {
      ...rest,
      number_fingerprint: numberFingerprint,
      cvc_given: cvc !== undefined || cvc2 !== undefined,
    },
  };
}

export async function getCard(caller: Caller, id: string): Promise<PresentedCard> {
  const found = isId("card", id) ? await findCard(caller.projectId, id) : undefined;
  if (!found || found.card.anonymized_at !== null) throw notFound("card", id);
  return presentCard(found.card);
}

/** `GET /cards`: the environment's cards that can still pay (an anonymized card is gone). */
export async function pageOfCards(caller: Caller, page: PageRequest) {
  const result = await listCards(caller.projectId, page);
  return { ...result, items: result.items.map((card) => presentCard(card)) };
}

/**
 * `PUT /cards/{id}`: a new CVC (sealed with its own data key; the card's CVC check is pending again,
 * until the next authorization or verification uses and drops it) and the preferred scheme.
 */
export async function updateCard(
  caller: Caller,
  id: string,
  input: Input,
  now = new Date(),
): Promise<PresentedCard> {
  const found = isId("card", id) ? await findCard(caller.projectId, id) : undefined;
  if (!found || found.card.anonymized_at !== null) throw notFound("card", id);
  const change = parseCardChange(input, found.card);
  const cvcSealed =
    change.cvc === undefined
      ? undefined
      : await cardVault().seal(change.cvc, { projectId: caller.projectId, cardId: id, field: "cvc" });
  const changed = await changeCard(
    caller.projectId,
    id,
    {
      ...(cvcSealed !== undefined ? { cvcSealed } : {}),
      ...(change.preferredScheme !== undefined ? { preferredScheme: change.preferredScheme } : {}),
    },
    now,
  );
  if (!changed) throw notFound("card", id);
  return presentCard(changed);
}

/**
 * `GET /iins/{iin}`: what can be told of the cards an IIN starts, before the card is tokenized (the
 * client libraries show the scheme as the number is typed). Without a BIN table, the scheme comes
 * from the IIN ranges `card-number.ts` knows, and the issuer's details are unknown (null). An IIN no
 * range holds is a 404.
 */
export function cardInformation(iin: string) {
  const scheme = schemeOfIin(iin);
  if (scheme === null) throw notFound("iin", iin);
  return { scheme, co_scheme: null, type: null, bank_name: null, brand: null, category: null, country: null };
}

/** `DELETE /cards/{id}`: anonymizes the card (see `anonymizeCard`); a card already anonymized is gone. */
export async function removeCard(caller: Caller, id: string, now = new Date()): Promise<void> {
  if (!isId("card", id) || !(await anonymizeCard(caller.projectId, id, now))) throw notFound("card", id);
}

/** A card of the environment that can pay (not anonymized), or a 404. */
export async function usableCard(caller: Caller, id: string): Promise<{ card: Card; secrets: CardSecrets }> {
  const found = isId("card", id) ? await findCard(caller.projectId, id) : undefined;
  if (!found || !isUsable(found.card, found.secrets)) throw notFound("card", id);
  return found;
}

/** Opens a usable card's secrets for one call to a connector. Keep the result no longer than that call. */
export async function cardCredentials(card: Card, secrets: CardSecrets): Promise<CardCredentials> {
  if (!secrets.number_sealed) throw new Error(`Card ${card.id} has no number: it cannot be used`);
  const vault = cardVault();
  const context = { projectId: card.project_id, cardId: card.id };
  const [number, cvc] = await Promise.all([
    vault.open(secrets.number_sealed, { ...context, field: "number" }),
    secrets.cvc_sealed ? vault.open(secrets.cvc_sealed, { ...context, field: "cvc" }) : null,
  ]);
  return {
    number,
    expMonth: card.exp_month,
    expYear: card.exp_year,
    cvc,
    name: card.name,
    fingerprint: card.fingerprint,
  };
}
