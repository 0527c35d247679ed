import { pageOfEvents } from "../../shared/events/api-service.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /events (optionally `?transaction_id=` or `?invoice_id=`: the events about that object) */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "event");
  return pageReply("events", await pageOfEvents(request.caller, page, request.query), page);
});
