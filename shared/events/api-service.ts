import type { PageRequest } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { findEvent, listEvents } from "./api-store.ts";
import type { EventRecord } from "./event.ts";

/**
 * `GET /events` and `GET /events/{id}`. The event's `data` holds the resources it is about as the
 * API presented them when it fired (`invoice` for the events of an invoice), so a receiver of a
 * webhook learns the state the event reports by fetching it.
 */
export function presentEvent(event: EventRecord) {
  return {
    id: event.id,
    project_id: event.project_id,
    name: event.name,
    data: event.data,
    sandbox: event.sandbox,
    fired_at: event.fired_at,
  };
}

export type PresentedEvent = ReturnType<typeof presentEvent>;

/** The caller's event, or a 404 `resource.event.not-found` (also for another environment's event). */
export async function getEvent(caller: Caller, id: string): Promise<PresentedEvent> {
  const event = isId("event", id) ? await findEvent(caller.projectId, id) : undefined;
  if (!event) throw notFound("event", id);
  return presentEvent(event);
}

export async function pageOfEvents(caller: Caller, page: PageRequest) {
  const result = await listEvents(caller.projectId, page);
  return { ...result, items: result.items.map(presentEvent) };
}
