import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { eventWebhooks } from "../../shared/webhooks/service.ts";

/** GET /events/{event_id}/webhooks */
export const handler = api(async (request) => {
  return ok(await eventWebhooks(request.caller, request.path.event_id ?? ""));
});
