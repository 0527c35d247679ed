import type { SQSRecord } from "aws-lambda";
import { decodeTime } from "ulid";
import { clock } from "../clock.ts";
import { isSandboxProjectId, newId } from "../ids.ts";
import { logger } from "../observability/logger.ts";
import {
  recordWebhookDeadLetter,
  recordWebhookDelivered,
  recordWebhookFailure,
} from "../observability/metrics.ts";
import {
  type Attempt,
  type Delivery,
  type DeliveryMessage,
  INITIAL_ROUND,
  parseDeliveryMessage,
} from "./delivery.ts";
import { postWebhook } from "./http-post.ts";
import { signingSecret } from "./project-settings.ts";
import { postpone } from "./queue.ts";
import { retryDelayAfter } from "./schedule.ts";
import { SIGNATURE_HEADER, signatureHeader } from "./signature.ts";
import { type DeliveryChange, findDelivery, recordAttempt } from "./store.ts";
import { policyFor } from "./url-policy.ts";

/**
 * The delivery worker's work: one attempt per received message. The message's receive count is the
 * attempt number; after a failure the message is hidden for the schedule's delay (`schedule.ts`),
 * and after the last one it is made visible at once, so that its next receive moves it, intact, to
 * the dead-letter queue. The delivery records every attempt and ends `delivered` or `failed`.
 */
export type Verdict = { kind: "done" } | { kind: "retry"; delaySeconds: number } | { kind: "give-up" };

/** SQS side: true when the message is done with (delete it), false when it stays for later. */
export async function handleDeliveryMessage(record: SQSRecord): Promise<boolean> {
  const message = parseDeliveryMessage(record.body);
  const verdict: Verdict = message
    ? await attemptDelivery(message, Number(record.attributes.ApproximateReceiveCount))
    : notADelivery(record);
  if (verdict.kind === "done") return true;
  await postpone(record.receiptHandle, verdict.kind === "retry" ? verdict.delaySeconds : 0);
  return false;
}

/** A message no attempt can ever succeed with goes to the dead-letter queue as fast as receives allow. */
function notADelivery(record: SQSRecord): Verdict {
  logger.error("Not a webhook delivery message: left for the dead-letter queue", {
    message_id: record.messageId,
  });
  recordWebhookDeadLetter();
  return { kind: "give-up" };
}

/** Makes attempt number `attempt` of the delivery `message` names, and records it. */
export async function attemptDelivery(message: DeliveryMessage, attempt: number): Promise<Verdict> {
  const where = { project_id: message.project_id, event_id: message.event_id, round: message.round };
  const delivery = await findDelivery(message);
  if (!delivery) {
    logger.error("Webhook delivery not found: message dropped", where);
    return { kind: "done" };
  }
  // Delivered or failed already: a duplicate message (see fan-out.ts).
  if (delivery.status !== "pending") return { kind: "done" };

  const secret = await signingSecret(delivery.project_id);
  const startedAt = clock.now();
  const body = JSON.stringify({ event_id: delivery.event_id });
  const outcome = await postWebhook(
    delivery.url,
    body,
    { [SIGNATURE_HEADER]: signatureHeader(secret, body, startedAt) },
    { policy: policyFor({ sandbox: isSandboxProjectId(delivery.project_id) }) },
  );

  const finishedAt = clock.now();
  const delay = outcome.ok ? undefined : retryDelayAfter(attempt);
  const nextAttemptAt =
    delay === undefined ? null : new Date(finishedAt.getTime() + delay * 1000).toISOString();
  const record: Attempt = {
    id: newId("webhook"),
    project_id: delivery.project_id,
    event_id: delivery.event_id,
    round: delivery.round,
    destination: delivery.destination,
    attempt,
    request_url: delivery.url,
    response_code: outcome.statusCode,
    response_body: outcome.responseBody,
    error: outcome.error,
    response_time_ms: outcome.durationMs,
    status: outcome.ok ? "delivered" : "failed",
    created_at: startedAt.toISOString(),
    next_attempt_at: nextAttemptAt,
  };
  const at = finishedAt.toISOString();
  const change: DeliveryChange = outcome.ok
    ? { status: "delivered", at }
    : nextAttemptAt === null
      ? { status: "failed", at }
      : { status: "pending", nextAttemptAt };
  await recordAttempt(record, change);

  logger.info("Webhook attempt", {
    ...where,
    destination: delivery.destination,
    attempt,
    status: record.status,
    response_code: outcome.statusCode,
    error: outcome.error,
    duration_ms: outcome.durationMs,
    ...(delay !== undefined ? { retry_in_seconds: delay } : {}),
  });
  if (outcome.ok) {
    recordWebhookDelivered(finishedAt.getTime() - roundStartedAt(delivery));
    return { kind: "done" };
  }
  if (delay === undefined) {
    recordWebhookDeadLetter();
    return { kind: "give-up" };
  }
  recordWebhookFailure();
  return { kind: "retry", delaySeconds: delay };
}

/**
 * Where a delivery's lag starts: its event's creation (the time in the event id's ULID, real time
 * even in a sandbox whose clock was moved), or for a resend, when the resend asked for it.
 */
function roundStartedAt(delivery: Delivery): number {
  if (delivery.round !== INITIAL_ROUND) return Date.parse(delivery.created_at);
  return decodeTime(delivery.event_id.slice(delivery.event_id.lastIndexOf("_") + 1));
}
