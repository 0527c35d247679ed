import type { TransactItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { presentAttempt, presentDelivery, presentResend, type Resend } from "./delivery.ts";
import { insertResend, readWebhookHistory } from "./store.ts";

/**
 * `GET /events/{id}/webhooks`: every attempt to deliver the event (`webhooks`, oldest first), and
 * where each of its deliveries stands (`deliveries`: pending, delivered, or failed for good).
 */
export async function eventWebhooks(caller: Caller, eventId: string) {
  const history = isId("event", eventId) ? await readWebhookHistory(caller.projectId, eventId) : undefined;
  if (!history?.eventExists) throw notFound("event", eventId);
  return {
    webhooks: history.attempts.map(presentAttempt),
    deliveries: history.deliveries.map(presentDelivery),
  };
}

/**
 * `POST /events/{id}/webhooks`: delivers the event again, now, to the destinations it has now. The
 * request is recorded (with the answer to its `Idempotency-Key`, in one transaction) and the
 * table's stream turns it into deliveries, as it does for the event itself: a crash after the
 * answer loses nothing.
 */
export async function resendEvent(
  caller: Caller,
  eventId: string,
  commit: (presented: ReturnType<typeof presentResend>) => TransactItem[],
  now: Date,
) {
  if (!isId("event", eventId)) throw notFound("event", eventId);
  const resend: Resend = {
    id: newId("webhookResend"),
    project_id: caller.projectId,
    event_id: eventId,
    requested_at: now.toISOString(),
  };
  const presented = presentResend(resend);
  if (!(await insertResend(resend, commit(presented)))) throw notFound("event", eventId);
  return presented;
}
