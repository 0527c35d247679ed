import { getCard } from "../../shared/cards/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /cards/{card_id} */
export const handler = api(async (request) => {
  const card = await getCard(request.caller, request.path.card_id ?? "");
  return ok({ card });
});
