import type { Card } from "../cards/card.ts";
import { findCards } from "../cards/store.ts";
import { tokenFromItem } from "./store.ts";
import { type PresentedToken, presentToken, type Token } from "./token.ts";

/**
 * Presents tokens (items of their customer's partition), oldest first, with their cards read in one
 * round trip: the one presenter of tokens wherever they are shown or expanded.
 */
export async function presentTokens(
  scope: string,
  defaultTokenId: string | null,
  items: readonly Record<string, unknown>[],
): Promise<PresentedToken[]> {
  const tokens = items.map(tokenFromItem).sort((a, b) => (a.id < b.id ? -1 : 1));
  return presentTokensInOrder(scope, defaultTokenId, tokens);
}

/** Presents tokens in the order given. */
export async function presentTokensInOrder(
  scope: string,
  defaultTokenId: string | null,
  tokens: readonly Token[],
) {
  const cardIds = tokens.flatMap((token) => (token.card_id ? [token.card_id] : []));
  const cards = cardIds.length > 0 ? await findCards(scope, cardIds) : new Map<string, Card>();
  return tokens.map((token) =>
    presentToken(token, (token.card_id && cards.get(token.card_id)) || null, defaultTokenId),
  );
}
