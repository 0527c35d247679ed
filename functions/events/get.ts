import { getEvent } from "../../shared/events/api-service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /events/{event_id} */
export const handler = api(async (request) => {
  const event = await getEvent(request.caller, request.path.event_id ?? "");
  return ok({ event });
});
