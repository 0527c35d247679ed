import type { Card, CardSecrets } from "../cards/card.ts";
import { usableCard } from "../cards/service.ts";
import { cardUsableCheck, findCard } from "../cards/store.ts";
import { config } from "../config.ts";
import { keys } from "../db/keys.ts";
import type { TransactItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, invalidField, notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import type { Invoice } from "../invoices/invoice.ts";
import { tokenFromItem } from "../tokens/store.ts";
import { isChargeable } from "../tokens/token.ts";
import { type Payment, paymentOf } from "./core.ts";
import { findTokenItem } from "./store.ts";

/**
 * What pays an invoice: a card, or a customer token of the invoice's customer, with the conditions
 * that keep it usable until the payment is recorded, and the customer's currency claim.
 */
export interface Source {
  cardId: string;
  tokenId: string | null;
  card: Card;
  secrets: CardSecrets;
  /** Conditions for the write that records the payment: the source is still usable. */
  checks: TransactItem[];
}

/**
 * A payment and, when read with it, the source it is paid with: a read that ended, whose failure
 * is the request's only once its turn comes (after the checks of the request's other fields).
 */
export interface PaymentRead {
  payment: Payment;
  source?: Promise<Source>;
}

/**
 * A payment (`paymentOf`) and the source `sourceId` names, read together: one round trip for a
 * card; a customer token is read after the invoice, whose customer owns it.
 */
export async function paymentWithSource(
  caller: Caller,
  invoiceId: string,
  sourceId: string,
): Promise<Required<PaymentRead>> {
  const paymentRead = paymentOf(caller, invoiceId);
  const cardRead = isId("card", sourceId) ? cardSource(caller, sourceId) : undefined;
  // Both end before either fails the request: the invoice's error comes first, whatever the timing.
  await Promise.allSettled([paymentRead, cardRead]);
  const payment = await paymentRead;
  const source = cardRead ?? resolveSource(caller, payment.invoice, sourceId);
  // Awaited by the payment's next step; a failure is not "unhandled" in the meantime.
  source.catch(() => {});
  return { payment, source };
}

async function cardSource(caller: Caller, cardId: string): Promise<Source> {
  const { card, secrets } = await usableCard(caller, cardId);
  return {
    cardId: card.id,
    tokenId: null,
    card,
    secrets,
    checks: [cardUsableCheck(caller.projectId, card.id)],
  };
}

/** A card id, or a customer token of the invoice's customer that can pay. */
export async function resolveSource(caller: Caller, invoice: Invoice, sourceId: string): Promise<Source> {
  const scope = caller.projectId;
  if (isId("card", sourceId)) return cardSource(caller, sourceId);
  if (!isId("token", sourceId)) throw invalidField("source", "must be a card id or a customer token id");
  const customerId = invoice.customer_id;
  if (customerId === null) {
    throw invalidField(
      "source",
      "a customer token can pay only an invoice of its customer (the invoice has none)",
    );
  }
  const item = await findTokenItem(scope, customerId, sourceId);
  if (!item) throw notFound("token", sourceId);
  const token = tokenFromItem(item);
  const found = token.card_id ? await findCard(scope, token.card_id) : undefined;
  if (!found || !isChargeable(token, found.card) || found.secrets.number_sealed === null) {
    throw new ApiError(400, "request.token.not-chargeable", `Customer token ${sourceId} cannot be charged.`);
  }
  const tokenCheck: TransactItem = {
    ConditionCheck: {
      TableName: config.tableName,
      Key: keys.child(scope, customerId, "token", sourceId),
      ConditionExpression: "#card_id = :card AND #status IN (:success, :notRequested)",
      ExpressionAttributeNames: { "#card_id": "card_id", "#status": "verification_status" },
      ExpressionAttributeValues: {
        ":card": found.card.id,
        ":success": "success",
        ":notRequested": "not-requested",
      },
    },
  };
  return {
    cardId: found.card.id,
    tokenId: sourceId,
    card: found.card,
    secrets: found.secrets,
    checks: [tokenCheck, cardUsableCheck(scope, found.card.id)],
  };
}

/**
 * The claim of the customer's currency by its first paid invoice: set when unset, and otherwise the
 * invoice must be in it. It commits with the transaction's creation, so two first invoices of one
 * customer in different currencies cannot both be paid.
 */
export function customerCurrencyClaim(caller: Caller, customerId: string, currency: string): TransactItem {
  return {
    Update: {
      TableName: config.tableName,
      Key: keys.resource(caller.projectId, customerId),
      UpdateExpression: "SET #currency = :currency",
      ConditionExpression:
        "#type = :customer AND (attribute_not_exists(#currency) OR attribute_type(#currency, :null) OR #currency = :currency)",
      ExpressionAttributeNames: { "#currency": "currency", "#type": "type" },
      ExpressionAttributeValues: { ":currency": currency, ":customer": "customer", ":null": "NULL" },
    },
  };
}

export const currencyMismatch = (customerId: string, currency: string | null) =>
  new ApiError(
    400,
    "request.customer.currency-mismatch",
    `Customer ${customerId} pays in ${currency ?? "another currency"}: it cannot pay an invoice in another currency.`,
  );
