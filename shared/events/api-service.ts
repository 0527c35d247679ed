import type { PageRequest } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField, notFound, validationFailed } from "../http/errors.ts";
import type { Input } from "../http/input.ts";
import { ID_PREFIXES, isId } from "../ids.ts";
import { findEvent, listEvents, listSubjectEvents } from "./api-store.ts";
import { EVENT_SUBJECT_KINDS, type EventRecord } from "./event.ts";

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

/**
 * `GET /events`: the environment's events, or with `transaction_id` or `invoice_id` (one of them)
 * those about that transaction or invoice, paged alike.
 */
export async function pageOfEvents(caller: Caller, page: PageRequest, query: Input = {}) {
  const subject = eventSubjectOf(query);
  const result = subject
    ? await listSubjectEvents(caller.projectId, subject, page)
    : await listEvents(caller.projectId, page);
  return { ...result, items: result.items.map(presentEvent) };
}

/** The transaction or invoice id a list of events is asked for, if any (a 400 naming a bad one). */
function eventSubjectOf(query: Input): string | undefined {
  const given = EVENT_SUBJECT_KINDS.flatMap((kind) => {
    const value = query[`${kind}_id`];
    return value === undefined || value === "" ? [] : [{ kind, name: `${kind}_id`, value }];
  });
  if (given.length > 1) {
    throw validationFailed(
      "invalid-subject",
      given.map(({ name }) => ({ name, message: "cannot be combined with another object's id" })),
      "Events are listed for one transaction or one invoice at a time.",
    );
  }
  const [subject] = given;
  if (!subject) return undefined;
  if (typeof subject.value !== "string" || !isId(subject.kind, subject.value)) {
    throw invalidField(subject.name, `must be an id starting with ${ID_PREFIXES[subject.kind]}`);
  }
  return subject.value;
}
