import { clock } from "../../shared/clock.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { resendEvent } from "../../shared/webhooks/service.ts";

/** POST /events/{event_id}/webhooks: 202, the deliveries follow from the table's stream. */
export const handler = api(async (request) => {
  const resend = await resendEvent(
    request.caller,
    request.path.event_id ?? "",
    (presented) => request.commitWith(ok({ resend: presented }, 202)),
    clock.now(),
  );
  return ok({ resend }, 202);
});
