import { cardIdempotencyParameters, tokenizeCard } from "../../shared/cards/service.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** POST /cards: the project id alone authenticates (browsers and apps tokenize cards). */
export const handler = api(
  async (request) => {
    const card = await tokenizeCard(request.caller, request.body, (presented) =>
      request.commitWith(ok({ card: presented })),
    );
    return ok({ card });
  },
  {
    publicKey: PUBLIC_KEY_ACCESS.cards,
    idempotencyParameters: (request) =>
      cardIdempotencyParameters(request.caller, request.query, request.body),
  },
);
