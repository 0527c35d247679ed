/**
 * The records of webhook delivery, all in the partition of their event:
 *
 * - a **delivery** is one event going to one destination in one round (`initial`, or a resend):
 *   created by the stream consumer when the event commits, then driven by the delivery worker
 *   from `pending` to `delivered`, or to `failed` once its last attempt failed;
 * - an **attempt** (`wh_…`, "a webhook" to client libraries) is one POST and its outcome;
 * - a **resend** (`whr_…`) asks for a new round of deliveries of the event.
 */
export type Destination = "project" | "invoice";
export type DeliveryStatus = "pending" | "delivered" | "failed";

/** The round of deliveries an event gets when it fires; a resend's round is the resend's id. */
export const INITIAL_ROUND = "initial";

export const DELIVERY_TYPE = "webhook_delivery";
export const ATTEMPT_TYPE = "webhook_attempt";
export const RESEND_TYPE = "webhook_resend";

export interface Delivery {
  project_id: string;
  event_id: string;
  round: string;
  destination: Destination;
  url: string;
  status: DeliveryStatus;
  /** Attempts made so far. */
  attempts: number;
  created_at: string;
  /** When its queue message was sent; unset while a crash could still have lost it. */
  enqueued_at: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  failed_at: string | null;
}

export interface Attempt {
  id: string;
  project_id: string;
  event_id: string;
  round: string;
  destination: Destination;
  /** 1 for the first attempt: the SQS receive count of the message that made it. */
  attempt: number;
  request_url: string;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  response_time_ms: number;
  status: "delivered" | "failed";
  created_at: string;
  /** When the next attempt is due, after a failure that is not the last. */
  next_attempt_at: string | null;
}

export interface Resend {
  id: string;
  project_id: string;
  event_id: string;
  requested_at: string;
}

/** The body of a delivery queue message: which delivery to attempt (and where, for whoever reads a dead letter). */
export interface DeliveryMessage {
  project_id: string;
  event_id: string;
  round: string;
  destination: Destination;
  url: string;
}

export function deliveryMessage(delivery: Delivery): DeliveryMessage {
  return {
    project_id: delivery.project_id,
    event_id: delivery.event_id,
    round: delivery.round,
    destination: delivery.destination,
    url: delivery.url,
  };
}

/** A queue message body as a delivery message, or undefined when it is not one. */
export function parseDeliveryMessage(body: string): DeliveryMessage | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const candidate = parsed as Partial<Record<keyof DeliveryMessage, unknown>> | null;
  const strings = ["project_id", "event_id", "round", "url"] as const;
  if (!candidate || strings.some((name) => typeof candidate[name] !== "string" || candidate[name] === "")) {
    return undefined;
  }
  if (candidate.destination !== "project" && candidate.destination !== "invoice") return undefined;
  return candidate as DeliveryMessage;
}

export function newDelivery(
  event: { id: string; project_id: string },
  round: string,
  target: { destination: Destination; url: string },
  now: Date,
): Delivery {
  return {
    project_id: event.project_id,
    event_id: event.id,
    round,
    destination: target.destination,
    url: target.url,
    status: "pending",
    attempts: 0,
    created_at: now.toISOString(),
    enqueued_at: null,
    last_attempt_at: null,
    next_attempt_at: null,
    delivered_at: null,
    failed_at: null,
  };
}

/** One attempt as `GET /events/{id}/webhooks` lists it (the client libraries' Webhook object). */
export function presentAttempt(attempt: Attempt) {
  return {
    id: attempt.id,
    project_id: attempt.project_id,
    event_id: attempt.event_id,
    request_url: attempt.request_url,
    request_method: "POST",
    response_code: attempt.response_code,
    response_body: attempt.response_body,
    response_time_ms: attempt.response_time_ms,
    error: attempt.error,
    status: attempt.status,
    attempt: attempt.attempt,
    destination: attempt.destination,
    round: attempt.round,
    created_at: attempt.created_at,
    release_at: attempt.next_attempt_at,
  };
}

/** Where a delivery stands: `pending` while attempts remain, then `delivered` or `failed`. */
export function presentDelivery(delivery: Delivery) {
  return {
    event_id: delivery.event_id,
    round: delivery.round,
    destination: delivery.destination,
    url: delivery.url,
    status: delivery.status,
    attempts: delivery.attempts,
    created_at: delivery.created_at,
    last_attempt_at: delivery.last_attempt_at,
    next_attempt_at: delivery.next_attempt_at,
    delivered_at: delivery.delivered_at,
    failed_at: delivery.failed_at,
  };
}

export function presentResend(resend: Resend) {
  return { id: resend.id, event_id: resend.event_id, requested_at: resend.requested_at };
}

/**
 * Where an event goes: the environment's webhook URL, and the invoice's own `webhook_url` when the
 * event is about an invoice (spec: both get it). The same URL twice is one destination.
 */
export function destinationsOf(
  event: { data: Record<string, unknown> },
  projectWebhookUrl: string | null | undefined,
): { destination: Destination; url: string }[] {
  const targets: { destination: Destination; url: string }[] = [];
  if (projectWebhookUrl) targets.push({ destination: "project", url: projectWebhookUrl });
  const invoice = event.data.invoice as { webhook_url?: unknown } | null | undefined;
  const invoiceUrl = typeof invoice?.webhook_url === "string" ? invoice.webhook_url : undefined;
  if (invoiceUrl && invoiceUrl !== projectWebhookUrl)
    targets.push({ destination: "invoice", url: invoiceUrl });
  return targets;
}
