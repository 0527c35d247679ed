import { type PaymentOutcome, recordPaymentOutcome, recordProviderCall } from "../observability/metrics.ts";
import type { PaymentConnector } from "./connector.ts";

/**
 * A configuration's connector whose every call is measured (`shared/observability/metrics.ts`): its
 * duration and whether it failed (a throw: the provider could not be reached, did not answer in
 * time, answered 5xx or something unreadable; a decline is an answer), by configuration id. An
 * authorization's answer (a card's `authorize`, a native APM's `pay`) is also counted as a payment:
 * approved, declined, or `error` when none came; the steps that ask the customer for more (a 3DS
 * round, a native APM's input) are not outcomes yet.
 *
 * Every connector is made by `connectGateway`, which hands out this wrapper: no call to a provider
 * goes around it.
 */
export function measuredConnector(connector: PaymentConnector, configurationId: string): PaymentConnector {
  const measured: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(connector)) {
    if (typeof member === "function") measured[name] = timed(member as Call, configurationId);
    else if (member && typeof member === "object") {
      const operations: Record<string, unknown> = {};
      for (const [operation, call] of Object.entries(member)) {
        operations[operation] =
          typeof call === "function"
            ? timed(call as Call, configurationId, outcomeOf(name, operation))
            : call;
      }
      measured[name] = operations;
    } else measured[name] = member;
  }
  return measured as unknown as PaymentConnector;
}

type Call = (...args: unknown[]) => Promise<unknown>;
type Outcome = (answer: unknown) => PaymentOutcome | undefined;

/** How a payment's answer reads as an outcome, for the operations that authorize a payment. */
function outcomeOf(group: string, operation: string): Outcome | undefined {
  if (group === "card" && operation === "authorize") {
    return (answer) => statusOutcome(answer, "approved");
  }
  if (group === "nativeApm" && operation === "pay") {
    return (answer) => statusOutcome(answer, "pending-capture");
  }
  return undefined;
}

function statusOutcome(answer: unknown, approvedStatus: string): PaymentOutcome | undefined {
  const status = (answer as { status?: unknown } | undefined)?.status;
  if (status === approvedStatus) return "approved";
  if (status === "declined") return "declined";
  return undefined;
}

function timed(call: Call, configurationId: string, outcome?: Outcome): Call {
  return async (...args) => {
    const started = performance.now();
    let answer: unknown;
    try {
      answer = await call(...args);
    } catch (error) {
      recordProviderCall(configurationId, performance.now() - started, true);
      if (outcome) recordPaymentOutcome(configurationId, "error");
      throw error;
    }
    recordProviderCall(configurationId, performance.now() - started, false);
    const paid = outcome?.(answer);
    if (paid) recordPaymentOutcome(configurationId, paid);
    return answer;
  };
}
