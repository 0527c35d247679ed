import { clock } from "../clock.ts";
import type { AuthorizeOutcome } from "../gateways/connector.ts";
import { configurationById, connectorOf } from "../gateways/routing.ts";
import { logger } from "../observability/logger.ts";
import { commitTransition, findTransactionRecord, transitionWrite } from "./store.ts";
import type { AuthorizationAttempt } from "./transaction.ts";

/**
 * An authorization a provider approved after the payment had moved on. A cascade only leaves a
 * configuration whose attempt moved no money: a decline, or an attempt the provider is known not to
 * have received or recorded (`lookup` found nothing). Should a provider's record say otherwise later
 * (a lookup that was not yet consistent), two providers would hold an approval for one invoice: the
 * late one is voided at its provider, and its attempt records when (`voided_extra_at`).
 *
 * Looked for when the provider's webhook tells of an authorization, and when the merchant asks the
 * providers where a payment stands (`PUT /invoices/{id}/sync-with-psp`). Only the attempts that were
 * `not-done` are asked about (a decline is final); one that is voided is never asked again.
 */
export async function voidExtraApprovals(scope: string, transactionId: string): Promise<number> {
  const found = await findTransactionRecord(scope, transactionId);
  const suspects = (found?.record.attempts ?? []).filter(
    (attempt) => attempt.outcome === "not-done" && !attempt.voided_extra_at,
  );
  let voided = 0;
  for (const attempt of suspects) {
    if (await voidedAtProvider(scope, attempt)) {
      await recordVoided(scope, transactionId, attempt.reference);
      voided += 1;
    }
  }
  return voided;
}

/** Whether the attempt's provider holds an approval of it, which is then voided there. */
async function voidedAtProvider(scope: string, attempt: AuthorizationAttempt): Promise<boolean> {
  const connector = await connectorOf(await configurationById(scope, attempt.gateway_configuration_id));
  const recorded = await connector.lookup({
    scope,
    kind: "authorization",
    reference: attempt.reference,
    gatewayReference: null,
    providerState: null,
  });
  if (recorded.status !== "found" || recorded.outcome.status !== "approved") return false;
  const { gatewayReference } = recorded.outcome as Extract<AuthorizeOutcome, { status: "approved" }>;
  // A reference of its own, the same on every try: a repeated void is the same operation.
  const outcome = await connector.void({ scope, gatewayReference, reference: `${attempt.reference}-void` });
  if (outcome.status === "declined") {
    logger.error("An extra authorization could not be voided at its provider", {
      gateway_configuration_id: attempt.gateway_configuration_id,
      reference: attempt.reference,
      error_code: outcome.errorType,
    });
    return false;
  }
  logger.warn("An extra authorization, approved late by a provider the payment had left, was voided", {
    gateway_configuration_id: attempt.gateway_configuration_id,
    reference: attempt.reference,
  });
  return true;
}

async function recordVoided(scope: string, transactionId: string, reference: string): Promise<void> {
  for (let attempt = 0; attempt < 4; attempt++) {
    const current = await findTransactionRecord(scope, transactionId);
    if (!current) return;
    const { record } = current;
    const at = clock.now().toISOString();
    const next = {
      ...record,
      attempts: (record.attempts ?? []).map((kept) =>
        kept.reference === reference ? { ...kept, voided_extra_at: at } : kept,
      ),
    };
    const outcome = await commitTransition([
      transitionWrite(current, next, { status: record.status, pending: record.pending?.id ?? null }),
    ]);
    if (outcome === "committed") return;
  }
  logger.error("An extra authorization was voided but could not be recorded", {
    transaction_id: transactionId,
    reference,
  });
}
