import { randomUUID } from "node:crypto";
import { withChecks } from "../cards/card.ts";
import { cardCredentials, usableCard } from "../cards/service.ts";
import { cardCheckedWrite, cardUsableCheck } from "../cards/store.ts";
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
import type { VerifyOutcome } from "../gateways/connector.ts";
import { declineError } from "../gateways/errors.ts";
import { cardGatewayConfiguration, connectorOf } from "../gateways/routing.ts";
import type { Caller } from "../http/auth.ts";
import { conflict, notFound } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { parseInput } from "../validation/parse.ts";
import { presentTokens, presentTokensInOrder } from "./present.ts";
import { createTokenInput, TOKEN_FIELD_NAMES, type TokenFields, updateTokenInput } from "./schema.ts";
import {
  claimVerification,
  completeVerification,
  deleteToken,
  insertToken,
  releaseVerification,
  type TokenChanges,
  tokenFromItem,
  updateToken,
} from "./store.ts";
import { newToken, type PresentedToken, presentToken, type Verification } from "./token.ts";

/**
 * Customer tokens. A token is created with a card (`source`, usable at once), or pending
 * (`verify=true` without a source) until `PUT` attaches a card and verifies it with the
 * environment's card gateway. `verify=true` with a source verifies at creation: a refused card fails
 * the creation and nothing is stored. The customer's first token becomes its default.
 *
 * A verification sends the card's CVC, if it still has one, and drops it from the card in the write
 * that records the outcome, refused or not (PCI DSS 3.3.1.2).
 */

/** Token answers carry `customer_action`, empty when the customer has nothing to do. */
export const NO_CUSTOMER_ACTION: Record<string, never> = {};

/** Attempts of a token write that keeps meeting a concurrent change of the customer's default token. */
const WRITE_ATTEMPTS = 3;

const concurrentChange = (customerId: string) =>
  conflict(
    "request.customer.concurrent-update",
    `Customer ${customerId} is being changed by another request.`,
  );

const tooManyTokens = (customerId: string) =>
  conflict(
    "request.customer.too-many-tokens",
    `Customer ${customerId} has as many tokens as a customer may have.`,
  );

export async function createToken(
  caller: Caller,
  customerId: string,
  input: unknown,
  commit: (presented: PresentedToken) => TransactItem[],
  now = new Date(),
): Promise<PresentedToken> {
  const fields = parseInput(createTokenInput, input);
  if (!isId("customer", customerId)) throw notFound("customer", customerId);
  const scope = caller.projectId;
  const id = newId("token");
  // Both are read before a card is sent to the gateway: the verification needs a customer to go to.
  const [card, firstRead] = await Promise.all([
    fields.source !== undefined ? usableCard(caller, fields.source) : undefined,
    findCustomer(scope, customerId),
  ]);
  if (!firstRead) throw notFound("customer", customerId);

  let verification: Verification = { status: "pending", cardId: null, gatewayConfigurationId: null };
  let cardWrite: TransactItem | undefined;
  let cardAfter = card?.card ?? null;
  if (card && fields.verify === true) {
    const { configuration, outcome } = await verify(caller, card);
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

/**
 * `PUT`: with a `source`, attaches the card to a token that awaits one (pending, or failed before)
 * and verifies it: `success` makes the token chargeable; a refusal leaves it `failed` and is
 * answered with the decline. Other fields are changed as sent; `set_default=true` makes the token
 * the customer's default.
 */
export async function changeToken(
  caller: Caller,
  customerId: string,
  tokenId: string,
  input: unknown,
  now = new Date(),
): Promise<PresentedToken> {
  const fields = parseInput(updateTokenInput, input);
  if (!isId("customer", customerId)) throw notFound("customer", customerId);
  if (!isId("token", tokenId)) throw notFound("token", tokenId);
  const scope = caller.projectId;
  const changes = sentChanges(fields);
  const customerWrite = fields.set_default ? defaultTokenWrite(scope, customerId, tokenId) : undefined;
  const refusal = (error: unknown, index: number) => tokenChangeRefusal(error, index, "default");

  if (fields.source === undefined) {
    const outcome = await updateToken(scope, customerId, tokenId, changes, now, customerWrite, refusal);
    if (outcome === "token-not-found") throw notFound("token", tokenId);
    if (outcome === "customer-not-found") throw notFound("customer", customerId);
    return getToken(caller, customerId, tokenId);
  }

  const card = await usableCard(caller, fields.source);
  const owner = randomUUID();
  const claim = await claimVerification(scope, customerId, tokenId, owner, now);
  if ("refused" in claim) {
    if (claim.refused === "token-not-found") throw notFound("token", tokenId);
    if (claim.refused === "in-progress") throw verificationInProgress(tokenId);
    throw conflict(
      "request.token.source-already-set",
      `Token ${tokenId} already has a source (verification ${claim.status}): create another token for another card.`,
    );
  }

  let verified: { configuration: GatewayConfiguration; outcome: VerifyOutcome };
  try {
    verified = await verify(caller, card);
  } catch (error) {
    await releaseVerification(scope, customerId, tokenId, owner);
    throw error;
  }
  const { configuration, outcome } = verified;
  // A refused card does not become the customer's default.
  const approved = outcome.status === "approved";
  const completed = await completeVerification(
    claim.claimed,
    {
      status: approved ? "success" : "failed",
      cardId: card.card.id,
      gatewayConfigurationId: configuration.id,
    },
    changes,
    owner,
    now,
    cardCheckedWrite(scope, card.card.id, outcome.checks),
    approved ? customerWrite : undefined,
    refusal,
  );
  if (completed === "card-unusable") {
    await releaseVerification(scope, customerId, tokenId, owner);
    throw notFound("card", card.card.id);
  }
  if (completed === "token-not-found" || completed === "customer-not-found") throw notFound("token", tokenId);
  if (completed === "claim-lost") throw verificationInProgress(tokenId);
  if (outcome.status === "declined") throw declineError(outcome);
  return getToken(caller, customerId, tokenId);
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
  conflict(
    "request.token.verification-in-progress",
    `Token ${tokenId} is being verified by another request.`,
  );

/** Verifies a card with the environment's card gateway. The opened secrets live for this call only. */
async function verify(
  caller: Caller,
  card: Awaited<ReturnType<typeof usableCard>>,
): Promise<{ configuration: GatewayConfiguration; outcome: VerifyOutcome }> {
  const configuration = await cardGatewayConfiguration(caller.projectId);
  const credentials = await cardCredentials(card.card, card.secrets);
  const connector = await connectorOf(configuration);
  if (!connector.card) throw new Error(`Gateway configuration ${configuration.id} takes no cards`);
  const outcome = await connector.card.verifyCard({
    scope: caller.projectId,
    // Each verification is its own operation for the gateway: a token refused once can be
    // verified again with another card.
    reference: newId("operation"),
    card: credentials,
  });
  return { configuration, outcome };
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
