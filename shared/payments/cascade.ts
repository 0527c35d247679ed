import { nowIn } from "../clock.ts";
import type { AuthorizeOutcome, Declined, RecordedOutcome } from "../gateways/connector.ts";
import { isSoftDecline } from "../gateways/declines.ts";
import { declineError } from "../gateways/errors.ts";
import { configurationForPayment } from "../gateways/routing.ts";
import { cachedConfigurations } from "../gateways/store.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError } from "../http/errors.ts";
import type { Invoice } from "../invoices/invoice.ts";
import type { RoutingExplanation } from "../routing/decide.ts";
import { breakers, claimProbe } from "../routing/health.ts";
import { routePayment } from "../routing/route.ts";
import { blockingAdvice, type SchemeState, schemeCheck } from "../routing/scheme-rules.ts";
import type { CallResult } from "./core.ts";
import type { Source } from "./sources.ts";
import type { TransactionRecord } from "./transaction.ts";

/**
 * Routing as a card payment meets it: where its authorization goes first, and whether, after an
 * attempt that moved no money, it goes on to the next configuration of its chain (the cascade).
 *
 * A cascade follows a soft decline (the decline catalogue's class) or an attempt the provider is
 * known not to have received or recorded (`notDone`: unreachable, or `lookup` found nothing). Never
 * after a hard decline, a failed 3DS authentication, or an issuer's advice not to retry; never on an
 * unknown outcome (the connector's `OutcomeUnknown` leaves the reservation for `lookup`, and the
 * request answers 504); after 3DS with one provider only when the request allows dropping liability
 * shift; never past the rule's `max_attempts`, nor when the card schemes' retry rules forbid
 * another attempt on the card (`shared/routing/scheme-rules.ts`).
 */
export interface RouteStep {
  configurationId: string;
  name: string;
  /** The configuration's breaker is half-open and this payment holds its probe. */
  probe: boolean;
}

export interface PaymentRoute {
  explanation: RoutingExplanation;
  first: RouteStep;
}

export interface RouteOptions {
  pinned: string | null;
  overrideMacBlocking: boolean;
  initiator: "customer" | "merchant";
}

const blocked = (explanation: RoutingExplanation) =>
  new ApiError(
    402,
    "request.routing.blocked",
    `The payment was blocked by routing rule ${explanation.rule?.id ?? ""}: ${explanation.blocked}.`,
  );

/**
 * Routes a new authorization of the invoice with the source: the card schemes' retry rules first
 * (refused before any provider is reached), then the decision, then the first configuration of
 * the chain that can take it now.
 */
export async function routed(
  caller: Caller,
  invoice: Invoice,
  source: Source,
  options: RouteOptions,
  transactionId: string,
): Promise<PaymentRoute> {
  const check = schemeCheck(
    source.card,
    { overrideMacBlocking: options.overrideMacBlocking, declinedNow: [] },
    nowIn(caller.environment),
  );
  if (check.refusal) throw declineError(check.refusal);
  const pinned = options.pinned
    ? (await configurationForPayment(caller.projectId, options.pinned, "card", "gateway_configuration_id")).id
    : null;
  const explanation = await routePayment({
    scope: caller.projectId,
    invoice,
    transactionId,
    card: { scheme: source.card.scheme, iin: source.card.iin },
    initiator: options.initiator,
    pinned,
  });
  explanation.scheme_rules.push(...check.notes);
  if (explanation.blocked !== null) throw blocked(explanation);
  const first = await nextStep(caller.projectId, explanation, new Set());
  if (!first) throw noRoute(explanation);
  return { explanation, first };
}

function noRoute(explanation: RoutingExplanation): ApiError {
  const tripped = explanation.skipped.some((skip) => skip.reason.startsWith("circuit"));
  return tripped
    ? new ApiError(
        503,
        "gateway.unavailable",
        "Every card gateway configuration that could take this payment is unavailable now (circuit open); nothing was done. Try again shortly.",
      )
    : new ApiError(
        400,
        "gateway.not-configured",
        "No enabled card gateway configuration can take this payment.",
      );
}

/**
 * The next configuration of the chain this payment has not tried, that can take it now: an open
 * breaker met since the decision is skipped, a half-open one only when this payment claims its
 * probe. Each one passed over is added to the explanation's `skipped`.
 */
export async function nextStep(
  scope: string,
  explanation: RoutingExplanation,
  tried: ReadonlySet<string>,
): Promise<RouteStep | undefined> {
  const configurations = await cachedConfigurations(scope);
  const pinned = explanation.decided_by === "pinned";
  const health = pinned ? new Map() : await breakers(explanation.chain);
  for (const id of explanation.chain) {
    if (tried.has(id)) continue;
    const configuration = configurations.find((candidate) => candidate.id === id);
    if (!configuration) continue;
    const state = health.get(id);
    let probe = false;
    if (state?.state === "open") {
      explanation.skipped.push({ gateway_configuration_id: id, reason: "circuit-open" });
      continue;
    }
    if (state?.state === "half-open") {
      probe = await claimProbe(id, state);
      if (!probe) {
        explanation.skipped.push({
          gateway_configuration_id: id,
          reason: "circuit-half-open-probe-in-flight",
        });
        continue;
      }
    }
    return { configurationId: id, name: configuration.gateway_name, probe };
  }
  return undefined;
}

/** Whether the provider answered (approving or declining): only faults count against its breaker. */
export function answered(result: CallResult<RecordedOutcome>): boolean {
  return "outcome" in result;
}

/**
 * Why an attempt's end does not move the payment to another configuration; undefined when it does
 * (the next configuration is then looked for: none left also ends the cascade).
 */
export function noCascade(
  record: TransactionRecord,
  result: CallResult<RecordedOutcome>,
  context: {
    attemptsMade: number;
    explanation: RoutingExplanation;
    dropLiabilityShift: boolean;
    overrideMacBlocking: boolean;
    scheme: SchemeState;
    declinedNow: readonly string[];
    now: Date;
  },
): string | undefined {
  let decline: Declined | undefined;
  if ("outcome" in result) {
    const outcome = result.outcome as AuthorizeOutcome;
    if (outcome.status !== "declined") return "not a decline";
    decline = outcome;
    if (!isSoftDecline(outcome.errorType)) return "hard decline";
    if (outcome.threeDS === "failed" || outcome.errorType === "card.failed-three-d-s")
      return "the cardholder failed 3DS authentication";
    const mac = blockingAdvice(outcome);
    if (outcome.advice === "do-not-retry" && !(mac && context.overrideMacBlocking))
      return mac ? `merchant advice code ${mac} forbids retries` : "the issuer advised not to retry";
  }
  if (context.explanation.decided_by === "pinned") return "pinned to one configuration";
  if (context.attemptsMade >= context.explanation.max_attempts)
    return `attempt limit of ${context.explanation.max_attempts} reached`;
  if (record.authentication && !context.dropLiabilityShift)
    return "authenticated with 3DS at this provider: retry_drop_liability_shift not set";
  if (decline) {
    const check = schemeCheck(
      context.scheme,
      { overrideMacBlocking: context.overrideMacBlocking, declinedNow: context.declinedNow },
      context.now,
    );
    if (check.refusal) return `card scheme rule: ${check.notes.join("; ")}`;
  }
  return undefined;
}
