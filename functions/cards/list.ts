import { pageOfCards } from "../../shared/cards/service.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /cards */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "card");
  return pageReply("cards", await pageOfCards(request.caller, page), page);
});
