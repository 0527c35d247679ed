import { updateCard } from "../../shared/cards/service.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** PUT /cards/{card_id}: a new CVC or preferred scheme (the mobile libraries, with the public key). */
export const handler = api(
  async (request) => ok({ card: await updateCard(request.caller, request.path.card_id ?? "", request.body) }),
  { publicKey: PUBLIC_KEY_ACCESS.cardRefresh },
);
