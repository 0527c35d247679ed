import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { search } from "../../shared/search/service.ts";

/** GET /search?query=&limit=: payments and customers by id, card last four or customer email. */
export const handler = api(async (request) => ok(await search(request.caller, request.query)), {
  expand: expandAnswer("transaction", "transactions"),
});
