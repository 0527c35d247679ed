import { removeCard } from "../../shared/cards/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** DELETE /cards/{card_id}: anonymizes the card. */
export const handler = api(async (request) => {
  await removeCard(request.caller, request.path.card_id ?? "");
  return ok({});
});
