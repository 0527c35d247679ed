import { randomBytes } from "node:crypto";
import { config } from "../config.ts";
import type {
  CustomerAction,
  ThreeDSChannel,
  ThreeDSContext,
  ThreeDSRound,
  ThreeDSRoundAnswer,
} from "../gateways/connector.ts";
import { invalidField } from "../http/errors.ts";
import type { ThreeDSAnswer } from "./gateway-request.ts";

/**
 * A 3-D Secure exchange: the rounds in which the issuer needs the cardholder before it decides, for
 * a payment (kept on its transaction) or a customer token's verification (kept on the token). Pure.
 *
 * Each attempt offers the connector an exchange (`ThreeDSAttempt`: where the cardholder is, and the
 * secret token that addresses the exchange's pages); when the issuer asks for a round, the exchange
 * opens (or goes on) with that round's customer action, which is answered again until the round is
 * answered: on the sandbox's challenge page, or by the browser or app sending a `gway_req_` source.
 * The next attempt passes the answer to the connector.
 */
export interface ThreeDSAttempt {
  /** The exchange's secret: the address of its pages (`/3ds/{token}`, `/3ds/{token}/fingerprint`). */
  token: string;
  channel: ThreeDSChannel;
}

export interface ThreeDSExchange extends ThreeDSAttempt {
  /** The rounds asked so far, in order; the last one is the current round. */
  rounds: ThreeDSRound[];
  /** The current round's customer action, answered again until the round is answered. */
  action: CustomerAction;
  /** The answer to the current round once given: the next attempt passes it on. */
  answer: ThreeDSRoundAnswer | null;
  /** What the connector kept with the round (`CustomerActionOutcome.providerState`), given back next. */
  provider_state?: Record<string, string> | null;
}

/** The secret address of an exchange's pages: 192 random bits. */
export function newExchangeToken(): string {
  return randomBytes(24).toString("base64url");
}

/** The attempt of an exchange: the open one's own, or a new one where the cardholder is. */
export function attemptOf(
  exchange: ThreeDSExchange | null | undefined,
  channel: ThreeDSChannel,
): ThreeDSAttempt {
  return exchange
    ? { token: exchange.token, channel: exchange.channel }
    : { token: newExchangeToken(), channel };
}

/** The sandbox's 3DS pages of an exchange: the challenge, and the browser's 3DS method page. */
export function challengeUrl(token: string): string {
  return `${config.apiUrl}/3ds/${token}`;
}

export function fingerprintUrl(token: string): string {
  return `${challengeUrl(token)}/fingerprint`;
}

/** Where a provider's authentication page sends the cardholder back to. */
export function providerReturnUrl(token: string): string {
  return `${challengeUrl(token)}/return`;
}

/** The exchange after the issuer asked for a round in `attempt`. */
export function roundAsked(
  previous: ThreeDSExchange | null | undefined,
  attempt: ThreeDSAttempt,
  round: ThreeDSRound,
  action: CustomerAction,
  providerState?: Record<string, string>,
): ThreeDSExchange {
  return {
    token: attempt.token,
    channel: attempt.channel,
    rounds: [...(previous?.rounds ?? []), round],
    action,
    answer: null,
    ...(providerState ? { provider_state: providerState } : {}),
  };
}

/** The round an exchange waits for an answer to; undefined once it is answered. */
export function openRound(exchange: ThreeDSExchange | null | undefined): ThreeDSRound | undefined {
  if (!exchange || exchange.answer) return undefined;
  return exchange.rounds.at(-1);
}

/** What the connector is given with an attempt: the exchange, and the answer to its last round. */
export function threeDSContext(
  attempt: ThreeDSAttempt,
  answer: ThreeDSRoundAnswer | null | undefined,
  serverTransactionId: string,
  providerState?: Record<string, string> | null,
): ThreeDSContext {
  return {
    channel: attempt.channel,
    serverTransactionId,
    fingerprintUrl: fingerprintUrl(attempt.token),
    challengeUrl: challengeUrl(attempt.token),
    returnUrl: providerReturnUrl(attempt.token),
    ...(answer ? { answer } : {}),
    ...(providerState ? { providerState } : {}),
  };
}

/** A `gway_req_` answer as the connector takes it. */
export function roundAnswer(answer: ThreeDSAnswer): ThreeDSRoundAnswer {
  return answer.kind === "fingerprint"
    ? { kind: "fingerprint", completed: answer.completed }
    : { kind: "challenge", approved: answer.approved };
}

/**
 * How a `gway_req_` answer relates to an exchange: it answers the open round (`answers`), or
 * repeats the answer to an earlier round of this very exchange (`replay`: nothing moves twice, the
 * current state is answered). Otherwise it is a 400 naming `source`: an answer naming a fingerprint
 * page must name this exchange's own (the browser's answers carry their page's address, so one
 * cannot be replayed against another payment), and an app's answer, which names nothing, must
 * answer a round this exchange asked for. `what` names the payment or token in the message.
 */
export function relationOf(
  exchange: ThreeDSExchange | null | undefined,
  answer: ThreeDSAnswer,
  what: string,
): "answers" | "replay" {
  if (!exchange)
    throw invalidField("source", `answers no 3DS step: ${what} has no 3-D Secure authentication`);
  if (answer.kind === "fingerprint" && answer.url && answer.url !== fingerprintUrl(exchange.token)) {
    throw invalidField("source", `answers the 3DS step of another payment, not of ${what}`);
  }
  const open = openRound(exchange);
  if (open === answer.kind) return "answers";
  if (exchange.rounds.includes(answer.kind)) return "replay";
  throw invalidField(
    "source",
    open
      ? `does not answer the 3DS step of ${what} (it waits for the customer action "${exchange.action.type}")`
      : `does not answer a 3DS step ${what} asked for`,
  );
}
