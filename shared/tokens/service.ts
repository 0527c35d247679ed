import { randomUUID } from "node:crypto";
import { routingScheme, withChecks } from "../cards/card.ts";
import { cardCredentials, usableCard } from "../cards/service.ts";
import { cardCheckedWrite, cardUsableCheck } from "../cards/store.ts";
import type { Customer } from "../customers/customer.ts";
import {
  type DefaultOnCreate,
  defaultTokenWrite,
  findCustomer,
  findCustomerWithTokens,
  tokenAddedWrite,
  tokenChangeRefusal,
  tokenRemovedWrite,
} from "../customers/store.ts";
import { type PageRequest, pageOfList } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import { eventWrite } from "../events/event.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import type {
  CustomerAction,
  DeclineType,
  ThreeDSChannel,
  ThreeDSContext,
  ThreeDSRoundAnswer,
  VerifyOutcome,
} from "../gateways/connector.ts";
import { OutcomeUnknown, ProviderUnreachable } from "../gateways/connector.ts";
import { declineError } from "../gateways/errors.ts";
import { connectorOf } from "../gateways/routing.ts";
import type { Caller, CredentialKind } from "../http/auth.ts";
import { ApiError, busy, conflict, notFound } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { logger } from "../observability/logger.ts";
import { verificationConfiguration } from "../routing/route.ts";
import {
  attemptOf,
  openRound,
  relationOf,
  roundAnswer,
  roundAsked,
  type ThreeDSAttempt,
  threeDSContext,
} from "../three-d-s/exchange.ts";
import { isGatewayRequest, parseGatewayRequest, type ThreeDSAnswer } from "../three-d-s/gateway-request.ts";
import { asksForThreeDS, threeDSChannelOf } from "../three-d-s/schema.ts";
import { exchangePut } from "../three-d-s/store.ts";
import { parseInput } from "../validation/parse.ts";
import { presentTokens, presentTokensInOrder } from "./present.ts";
import { createTokenInput, TOKEN_FIELD_NAMES, type TokenFields, updateTokenInput } from "./schema.ts";
import {
  awaitCardholder,
  claimVerification,
  completeVerification,
  deleteToken,
  insertToken,
  releaseVerification,
  type TokenChanges,
  tokenFromItem,
  updateToken,
} from "./store.ts";
import {
  newToken,
  type PresentedToken,
  presentToken,
  type Token,
  type TokenThreeDS,
  type Verification,
} from "./token.ts";

/**
 * Customer tokens. A token is created with a card (`source`, usable at once), or pending
 * (`verify=true` without a source) until `PUT` attaches a card and verifies it with the
 * environment's card gateway. `verify=true` with a source verifies at creation: a refused card fails
 * the creation and nothing is stored. The customer's first token becomes its default.
 *
 * A verification sends the card's CVC, if it still has one, and drops it from the card in the write
 * that records the outcome, refused or not (PCI DSS 3.3.1.2).
 */

/** Token answers to the merchant's server carry `customer_action`, empty when there is nothing to do. */
export const NO_CUSTOMER_ACTION: Record<string, never> = {};

/** Attempts of a token write that keeps meeting a concurrent change of the customer's default token. */
const WRITE_ATTEMPTS = 3;

const concurrentChange = (customerId: string) =>
  busy("request.customer.concurrent-update", `Customer ${customerId} is being changed by another request.`);

const tooManyTokens = (customerId: string) =>
  conflict(
    "request.customer.too-many-tokens",
    `Customer ${customerId} has as many tokens as a customer may have.`,
  );

/**
 * What a caller that makes a token as part of its own request (a subscription paid by card) already
 * read in its first round trip: the customer, and the reading of the source card (its refusal is
 * raised at its turn here).
 */
export interface Preread {
  customer: Customer;
  card?: ReturnType<typeof usableCard> | undefined;
}

export async function createToken(
  caller: Caller,
  customerId: string,
  input: unknown,
  commit: (presented: PresentedToken) => TransactItem[],
  now = new Date(),
  preread?: Preread,
): Promise<PresentedToken> {
  const fields = parseInput(createTokenInput, input);
  if (!isId("customer", customerId)) throw notFound("customer", customerId);
  const scope = caller.projectId;
  const id = newId("token");
  // Both are read before a card is sent to the gateway: the verification needs a customer to go to.
  const [card, firstRead] = await Promise.all([
    fields.source !== undefined ? (preread?.card ?? usableCard(caller, fields.source)) : undefined,
    preread?.customer ?? findCustomer(scope, customerId),
  ]);
  if (!firstRead) throw notFound("customer", customerId);

  let verification: Verification = { status: "pending", cardId: null, gatewayConfigurationId: null };
  let cardWrite: TransactItem | undefined;
  let cardAfter = card?.card ?? null;
  if (card && fields.verify === true) {
    // The merchant's server verifies without the cardholder: no 3DS, so no customer action.
    const { configuration, outcome } = await verify(caller, card, { scheme: routingScheme(card.card, null) });
    if (outcome.status === "customer-action")
      throw new Error("A verification without 3DS asked for the cardholder");
    cardWrite = cardCheckedWrite(scope, card.card.id, outcome.checks);
    if (outcome.status === "declined") {
      await recordRefusedCheck(cardWrite);
      throw declineError(outcome);
    }
    verification = { status: "success", cardId: card.card.id, gatewayConfigurationId: configuration.id };
    cardAfter = withChecks(card.card, outcome.checks);
  } else if (card) {
    cardWrite = cardUsableCheck(scope, card.card.id);
    verification = { status: "not-requested", cardId: card.card.id, gatewayConfigurationId: null };
  }
  const token = newToken(caller, id, customerId, fields, verification, now);

  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const customer = attempt === 1 ? firstRead : await findCustomer(scope, customerId);
    if (!customer) throw notFound("customer", customerId);
    const mode: DefaultOnCreate = fields.set_default
      ? "replace"
      : customer.default_token_id === null
        ? "first"
        : "keep";
    const presented = presentToken(token, cardAfter, mode === "keep" ? customer.default_token_id : token.id);
    const outcome = await insertToken(
      token,
      tokenAddedWrite(scope, customerId, id, mode),
      cardWrite,
      [...eventWrite(scope, "customer.token.created", { token: presented }, now), ...commit(presented)],
      (error, index) => tokenChangeRefusal(error, index, "added"),
    );
    if (outcome === "created") return presented;
    if (outcome === "customer-not-found") throw notFound("customer", customerId);
    if (outcome === "too-many-tokens") throw tooManyTokens(customerId);
    if (outcome === "card-unusable") throw notFound("card", card?.card.id);
  }
  throw concurrentChange(customerId);
}

/** The token with its card, as `GET` shows it. */
export async function getToken(caller: Caller, customerId: string, tokenId: string): Promise<PresentedToken> {
  const found = isId("customer", customerId)
    ? await findCustomerWithTokens(caller.projectId, customerId)
    : undefined;
  if (!found) throw notFound("customer", customerId);
  const item = isId("token", tokenId)
    ? found.tokens.find((candidate) => candidate.id === tokenId)
    : undefined;
  if (!item) throw notFound("token", tokenId);
  const [presented] = await presentTokens(caller.projectId, found.customer.default_token_id, [item]);
  return presented as PresentedToken;
}

/** A page of the customer's tokens: they are few (one query on the customer's partition). */
export async function pageOfTokens(caller: Caller, customerId: string, page: PageRequest) {
  const found = isId("customer", customerId)
    ? await findCustomerWithTokens(caller.projectId, customerId)
    : undefined;
  if (!found) throw notFound("customer", customerId);
  const result = pageOfList(found.tokens.map(tokenFromItem), page);
  return {
    ...result,
    items: await presentTokensInOrder(caller.projectId, found.customer.default_token_id, result.items),
  };
}

/** What a token `PUT` answers: the token, and the customer action its verification waits for. */
export interface TokenChange {
  token: PresentedToken;
  customerAction?: CustomerAction;
}

/**
 * `PUT`: with a `source`, attaches the card to a token that awaits one (pending, or failed before)
 * and verifies it: `success` makes the token chargeable; a refusal leaves it `failed` and is
 * answered with the decline. Other fields are changed as sent; `set_default=true` makes the token
 * the customer's default. (What the shopper's browser or app, the public key, may send here is
 * held by the HTTP core: a source only.)
 *
 * A verification from the shopper's browser or app (or one asking for 3DS2) runs 3-D Secure: when
 * the issuer needs the cardholder, the token stays `pending` with the round's customer action, and
 * the next `PUT` (the same card again after the challenge page, or the browser's or app's
 * `gway_req_` answer as source) goes on with the same card until the issuer decides.
 */
export async function changeToken(
  caller: Caller,
  credential: CredentialKind,
  customerId: string,
  tokenId: string,
  input: unknown,
  now = new Date(),
): Promise<TokenChange> {
  const fields = parseInput(updateTokenInput, input);
  const answer =
    fields.source && isGatewayRequest(fields.source) ? parseGatewayRequest(fields.source) : undefined;
  if (!isId("customer", customerId)) throw notFound("customer", customerId);
  if (!isId("token", tokenId)) throw notFound("token", tokenId);
  // The shopper is there to authenticate: their browser or app runs 3DS.
  const fromShopper = credential === "public-key";
  const scope = caller.projectId;
  const changes = sentChanges(fields);
  const customerWrite = fields.set_default ? defaultTokenWrite(scope, customerId, tokenId) : undefined;
  const refusal = (error: unknown, index: number) => tokenChangeRefusal(error, index, "default");

  if (fields.source === undefined) {
    const outcome = await updateToken(scope, customerId, tokenId, changes, now, customerWrite, refusal);
    if (outcome === "token-not-found") throw notFound("token", tokenId);
    if (outcome === "customer-not-found") throw notFound("customer", customerId);
    return { token: await getToken(caller, customerId, tokenId) };
  }

  const owner = randomUUID();
  const claim = await claimVerification(scope, customerId, tokenId, owner, now);
  if ("refused" in claim) {
    if (claim.refused === "token-not-found") throw notFound("token", tokenId);
    if (claim.refused === "in-progress") throw verificationInProgress(tokenId);
    // The answer to the last round of a verification that succeeded, again: the token as it is.
    if (answer && relationOf(claim.token.three_d_s, answer, `token ${tokenId}`) === "replay") {
      return { token: await getToken(caller, customerId, tokenId) };
    }
    throw conflict(
      "request.token.source-already-set",
      `Token ${tokenId} already has a source (verification ${claim.status}): create another token for another card.`,
    );
  }

  let step: VerificationStep;
  let verified: { configuration: GatewayConfiguration; outcome: VerifyOutcome };
  try {
    step = verificationStep(claim.claimed, fields.source, answer, {
      channel: threeDSChannelOf(fields),
      runsThreeDS: fromShopper || asksForThreeDS(fields),
    });
    if ("replay" in step) {
      await releaseVerification(scope, customerId, tokenId, owner);
      if (step.replay.ended?.status === "failed") throw recordedRefusal(step.replay.ended);
      return {
        token: await getToken(caller, customerId, tokenId),
        ...(openRound(step.replay) ? { customerAction: step.replay.action } : {}),
      };
    }
    const card = await usableCard(caller, step.cardId);
    verified = await verify(caller, card, {
      scheme: routingScheme(card.card, fields.preferred_scheme ?? null),
      ...(step.attempt
        ? { threeDS: threeDSContext(step.attempt, step.given, tokenId, step.exchange?.provider_state) }
        : {}),
    });
  } catch (error) {
    await releaseVerification(scope, customerId, tokenId, owner);
    throw error;
  }
  const { configuration, outcome } = verified;

  if (outcome.status === "customer-action") {
    const attempt = step.attempt as ThreeDSAttempt;
    const threeDS: TokenThreeDS = {
      ...roundAsked(step.exchange, attempt, outcome.round, outcome.customerAction, outcome.providerState),
      card_id: step.cardId,
      ended: null,
    };
    const opens = step.exchange === null;
    const pages = opens ? [exchangePut(attempt.token, { kind: "token", scope, customerId, tokenId })] : [];
    if ((await awaitCardholder(claim.claimed, threeDS, owner, now, pages)) === "claim-lost") {
      throw verificationInProgress(tokenId);
    }
    return { token: await getToken(caller, customerId, tokenId), customerAction: outcome.customerAction };
  }

  // A refused card does not become the customer's default.
  const approved = outcome.status === "approved";
  const completed = await completeVerification(
    claim.claimed,
    {
      status: approved ? "success" : "failed",
      cardId: step.cardId,
      gatewayConfigurationId: configuration.id,
      threeDS: step.exchange
        ? {
            ...step.exchange,
            answer: step.given ?? null,
            ended: approved
              ? { status: "success" }
              : { status: "failed", error_type: outcome.errorType, message: outcome.message },
          }
        : null,
    },
    changes,
    owner,
    now,
    cardCheckedWrite(scope, step.cardId, outcome.checks),
    approved ? customerWrite : undefined,
    refusal,
  );
  if (completed === "card-unusable") {
    await releaseVerification(scope, customerId, tokenId, owner);
    throw notFound("card", step.cardId);
  }
  if (completed === "token-not-found" || completed === "customer-not-found") throw notFound("token", tokenId);
  if (completed === "claim-lost") throw verificationInProgress(tokenId);
  if (outcome.status === "declined") throw declineError(outcome);
  return { token: await getToken(caller, customerId, tokenId) };
}

/**
 * What a claimed verification does: verify `cardId` (with the 3DS `attempt` and the answer `given`
 * to its last round, when 3DS runs), or answer again the round of `replay`, which this request
 * repeats.
 */
type VerificationStep =
  | {
      cardId: string;
      attempt?: ThreeDSAttempt;
      given?: ThreeDSRoundAnswer;
      /** The exchange the verification goes on with; null when it opens one (or runs no 3DS). */
      exchange: TokenThreeDS | null;
    }
  | { replay: TokenThreeDS };

function verificationStep(
  token: Token,
  source: string,
  answer: ThreeDSAnswer | undefined,
  wanted: { channel: ThreeDSChannel; runsThreeDS: boolean },
): VerificationStep {
  const exchange = token.three_d_s ?? null;
  if (answer) {
    const relation = relationOf(exchange, answer, `token ${token.id}`);
    const open = exchange as TokenThreeDS;
    if (relation === "replay") return { replay: open };
    return { cardId: open.card_id, attempt: open, given: roundAnswer(answer), exchange: open };
  }
  // The same card again goes on with its exchange: the same action while its round is open, the
  // challenge page's answer once given. Another card (or an ended exchange) starts afresh.
  const going = exchange && exchange.ended === null && exchange.card_id === source ? exchange : null;
  if (going && openRound(going)) return { replay: going };
  if (going) return { cardId: source, attempt: going, given: going.answer ?? undefined, exchange: going };
  return {
    cardId: source,
    ...(wanted.runsThreeDS ? { attempt: attemptOf(null, wanted.channel) } : {}),
    exchange: null,
  };
}

/** The decline a verification ended with, answered again to a replay of its last round. */
function recordedRefusal(ended: { error_type: string; message: string }) {
  return declineError({
    status: "declined",
    errorType: ended.error_type as DeclineType,
    message: ended.message,
  });
}

/** Deletes a token; a deleted default token leaves the customer without one. */
export async function removeToken(caller: Caller, customerId: string, tokenId: string, now = new Date()) {
  const scope = caller.projectId;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const found = isId("customer", customerId) ? await findCustomerWithTokens(scope, customerId) : undefined;
    if (!found) throw notFound("customer", customerId);
    const item = isId("token", tokenId)
      ? found.tokens.find((candidate) => candidate.id === tokenId)
      : undefined;
    if (!item) throw notFound("token", tokenId);
    const defaultTokenId = found.customer.default_token_id;
    const [presented] = await presentTokens(scope, defaultTokenId, [item]);
    const outcome = await deleteToken(
      tokenFromItem(item),
      tokenRemovedWrite(scope, customerId, tokenId, defaultTokenId === tokenId),
      eventWrite(scope, "customer.token.deleted", { token: presented }, now),
      (error, index) => tokenChangeRefusal(error, index, "removed"),
    );
    if (outcome === "deleted") return;
    if (outcome === "token-not-found") throw notFound("token", tokenId);
    if (outcome === "customer-not-found") throw notFound("customer", customerId);
  }
  throw concurrentChange(customerId);
}

const verificationInProgress = (tokenId: string) =>
  busy("request.token.verification-in-progress", `Token ${tokenId} is being verified by another request.`);

/** Verifies a card with the environment's card gateway. The opened secrets live for this call only. */
async function verify(
  caller: Caller,
  card: Awaited<ReturnType<typeof usableCard>>,
  options: { scheme: string | null; threeDS?: ThreeDSContext },
): Promise<{ configuration: GatewayConfiguration; outcome: VerifyOutcome }> {
  const configuration = await verificationConfiguration(caller.projectId);
  const credentials = await cardCredentials(card.card, card.secrets);
  const connector = await connectorOf(configuration);
  if (!connector.card) throw new Error(`Gateway configuration ${configuration.id} takes no cards`);
  const operations = connector.card;
  try {
    const outcome = await operations.verifyCard({
      scope: caller.projectId,
      // Each verification is its own operation for the gateway: a token refused once can be
      // verified again with another card.
      reference: newId("operation"),
      card: credentials,
      scheme: options.scheme,
      ...(options.threeDS ? { threeDS: options.threeDS } : {}),
    });
    return { configuration, outcome };
  } catch (error) {
    throw verificationFailed(error);
  }
}

/**
 * A verification the gateway did not answer: it moves no money (a zero-amount check under a
 * reference of its own), so it is answered as the gateway's failure, and may be tried again.
 */
function verificationFailed(error: unknown): ApiError {
  logger.warn("Card verification failed at the gateway", { error });
  if (error instanceof ProviderUnreachable) {
    return new ApiError(
      502,
      error.errorType,
      "The gateway could not be reached; nothing was done. Try again.",
    );
  }
  if (error instanceof OutcomeUnknown) {
    return new ApiError(
      504,
      "gateway.timeout",
      "The gateway did not answer in time; the verification can be tried again.",
    );
  }
  return new ApiError(
    502,
    "gateway.error",
    "The gateway failed to verify the card; nothing was done. Try again.",
  );
}

/**
 * A refused verification at creation stores no token, but the card's CVC was used: it is dropped and
 * the check results recorded all the same. A card anonymized meanwhile has nothing left to drop.
 */
async function recordRefusedCheck(cardWrite: TransactItem): Promise<void> {
  try {
    await transactWrite([cardWrite]);
  } catch (error) {
    if (!failedConditions(error)?.includes(0)) throw error;
  }
}

function sentChanges(fields: TokenFields): TokenChanges {
  const changes: TokenChanges = {};
  for (const name of TOKEN_FIELD_NAMES) {
    if (fields[name] !== undefined) Object.assign(changes, { [name]: fields[name] });
  }
  return changes;
}
