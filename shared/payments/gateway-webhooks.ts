import { clock, nowIn } from "../clock.ts";
import { eventWrites } from "../events/event.ts";
import { recordNotification } from "../gateways/adyen/notifications.ts";
import { adyenEffects, verifiedBatch } from "../gateways/adyen/webhook.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { configurationById, openedSettings } from "../gateways/routing.ts";
import { configurationOwner } from "../gateways/store.ts";
import { stripeEffects, stripeEventLive, stripeSignatureProblem } from "../gateways/stripe/webhook.ts";
import type { GatewayEffect } from "../gateways/webhooks.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { findInvoice } from "../invoices/store.ts";
import { logger } from "../observability/logger.ts";
import { findEnvironment } from "../projects/environment.ts";
import { events, inProgress } from "./core.ts";
import { voidExtraApprovals } from "./extra-approvals.ts";
import { settleGatewayDecision } from "./recovery.ts";
import { commitTransition, findGatewayPayment, findTransactionRecord, transitionWrite } from "./store.ts";
import { refundFailed } from "./transaction.ts";

/**
 * `POST /gateway-webhooks/{gateway_configuration_id}`: a provider tells what it decided. No
 * credentials: the request is verified by the provider's own signature with the configuration's
 * secret before anything is read (Stripe: `Stripe-Signature`, 300 s tolerance; Adyen: each item's
 * HMAC), and an unverified one changes nothing and gets a 4xx. A verified one is applied: the
 * reserved operation of the payment it names is settled from the provider's record, with the events
 * any settlement records; a repeat finds nothing left to do. When a request still holds the
 * operation (it is settling it now), the answer is a 503 and the provider sends the webhook again.
 */
export async function receiveGatewayWebhook(
  configurationId: string,
  request: { headers: Record<string, string | undefined>; rawBody: string },
): Promise<Record<string, unknown>> {
  const scope = await configurationOwner(configurationId);
  if (!scope) throw notFound("gateway-configuration", configurationId);
  const configuration = await configurationById(scope, configurationId);
  const settings = await openedSettings(configuration);
  const effects = await verifiedEffects(configuration, settings, request);
  let retryLater = false;
  for (const effect of effects) {
    if ((await apply(scope, configuration, effect)) === "busy") retryLater = true;
  }
  if (retryLater) {
    throw new ApiError(
      503,
      "gateway.webhook.retry-later",
      "A request is settling this payment right now: send the notification again later.",
    );
  }
  return configuration.gateway_name === "adyen" ? { notificationResponse: "[accepted]" } : { received: true };
}

const refused = (why: string) =>
  new ApiError(400, "request.webhook.unverified", `The webhook was refused: ${why}.`);

async function verifiedEffects(
  configuration: GatewayConfiguration,
  settings: Record<string, string>,
  request: { headers: Record<string, string | undefined>; rawBody: string },
): Promise<GatewayEffect[]> {
  switch (configuration.gateway_name) {
    case "stripe": {
      const secret = settings.webhook_secret;
      if (!secret) throw refused("the configuration has no webhook_secret to verify it with");
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      const problem = stripeSignatureProblem(
        request.headers["stripe-signature"],
        request.rawBody,
        secret,
        nowSeconds,
      );
      if (problem) throw refused(problem);
      let body: unknown;
      try {
        body = JSON.parse(request.rawBody);
      } catch {
        throw refused("the body is not a Stripe event");
      }
      const live = stripeEventLive(body);
      if (live === undefined) throw refused("the event does not say whether it is live");
      if (live === configuration.sandbox) {
        throw refused(
          `a ${configuration.sandbox ? "live" : "test"} event cannot reach a ${configuration.sandbox ? "sandbox" : "live"} environment`,
        );
      }
      return stripeEffects(body);
    }
    case "adyen": {
      const batch = verifiedBatch(request.rawBody, settings.hmac_key, configuration.sandbox);
      if ("problem" in batch) throw refused(batch.problem);
      // Adyen's record of each operation is what its notifications say: kept before anything acts on it.
      await Promise.all(
        batch.items.map((item) => recordNotification(configuration.project_id, configuration.id, item)),
      );
      return batch.items.flatMap(adyenEffects);
    }
    default:
      throw notFound("gateway-configuration", configuration.id);
  }
}

async function apply(
  scope: string,
  configuration: GatewayConfiguration,
  effect: GatewayEffect,
): Promise<"done" | "busy"> {
  const transactionId =
    (effect.kind === "settle" ? effect.transactionId : null) ??
    (await findGatewayPayment(scope, configuration.id, effect.gatewayReference));
  if (!transactionId) {
    // Not one of ours (yet): a payment made elsewhere on the account, or one whose authorization is
    // still reserved, which the recovery job settles from the provider's record.
    logger.info("Gateway webhook about no known payment", { configuration_id: configuration.id });
    return "done";
  }
  if (effect.kind === "settle") {
    const outcome = await settleGatewayDecision(scope, transactionId, effect.operation);
    logger.info("Gateway webhook applied", { transaction_id: transactionId, outcome });
    // An authorization the payment had moved away from may have been approved after all.
    if (!effect.operation || effect.operation.type === "authorization")
      await voidExtraApprovals(scope, transactionId);
    return outcome === "busy" ? "busy" : "done";
  }
  return recordRefundFailure(scope, transactionId, effect.refundId);
}

/** A refund failed after the provider accepted it: recorded once, with `transaction.refund_failed`. */
async function recordRefundFailure(
  scope: string,
  transactionId: string,
  refundId: string,
): Promise<"done" | "busy"> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const [environment, current] = await Promise.all([
      findEnvironment(scope),
      findTransactionRecord(scope, transactionId),
    ]);
    if (!environment || !current) return "done";
    const now = nowIn(environment);
    const next = refundFailed(current.record, refundId, now);
    if (!next) return "done";
    const invoice = await findInvoice(scope, current.record.invoice_id);
    if (!invoice) return "done";
    const outcome = await commitTransition([
      transitionWrite(current, next, {
        status: current.record.status,
        pending: current.record.pending?.id ?? null,
      }),
      ...eventWrites(scope, events(invoice.invoice, next, ["transaction.refund_failed"]), now),
    ]);
    if (outcome === "committed") return "done";
  }
  return "busy";
}

/**
 * `PUT /invoices/{invoice_id}/sync-with-psp`: asks the provider where the invoice's payment stands
 * and settles what we had missed: an operation left reserved (its answer lost, or awaited from the
 * provider's webhook) is settled from the provider's record now, and an attempt a cascade left that
 * its provider approved late is voided there (`extra-approvals.ts`). A request settling it at this
 * very moment makes it a 409 (try again in a moment); nothing reserved leaves the payment as it is.
 */
export async function syncWithProvider(caller: Caller, invoiceId: string): Promise<void> {
  const found = isId("invoice", invoiceId) ? await findInvoice(caller.projectId, invoiceId) : undefined;
  if (!found) throw notFound("invoice", invoiceId);
  const transactionId = found.invoice.transaction_id;
  if (!transactionId) return;
  const outcome = await settleGatewayDecision(caller.projectId, transactionId);
  // An attempt the payment moved on from, approved late: voided at its provider.
  await voidExtraApprovals(caller.projectId, transactionId);
  if (outcome === "busy") throw inProgress(transactionId);
  if (outcome === "unknown") {
    throw new ApiError(
      504,
      "gateway.timeout",
      `The gateway cannot tell yet how the pending operation of transaction ${transactionId} ended; try again later.`,
    );
  }
}
