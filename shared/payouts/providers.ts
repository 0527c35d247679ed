import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { clock, nowIn } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type Scope } from "../db/keys.ts";
import { conditionFailedItem } from "../db/transactions.ts";
import { eventWrite } from "../events/event.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { openedSettings } from "../gateways/routing.ts";
import { readConfigurations } from "../gateways/store.ts";
import type { StripeBalanceTransaction, StripePayoutWithItems } from "../gateways/stripe/payouts.ts";
import { logger } from "../observability/logger.ts";
import type { ProjectEnvironment } from "../projects/environment.ts";
import type { FeeBreakdown } from "./fees.ts";
import { derivedId, type Payout, type PayoutItem, type PayoutItemType, presentPayout } from "./payout.ts";
import { providerItemMismatch, transactionsOfPayments } from "./reconcile.ts";
import { insertPayout, putPayoutItems } from "./store.ts";

/**
 * Providers' payouts, read by the daily close: for each Stripe configuration of the environment, the
 * payouts Stripe made since the last close read them (a cursor per configuration, read again an hour
 * back, since a list may show a new payout a moment late), each with its balance transactions as
 * items. Idempotent by Stripe's payout id (our id is derived from it, the write conditional), so a
 * payout read twice is made once. Items are matched to our transactions by the PaymentIntent the
 * connector stored as the transaction's gateway reference (`keys.gatewayPayment`).
 */
const REREAD_SECONDS = 3600;

export async function closeProviderPayouts(environment: ProjectEnvironment): Promise<string> {
  const scope = environment.id;
  const stripe = (await readConfigurations(scope)).filter(
    (configuration) => configuration.gateway_name === "stripe" && configuration.deleted_at === null,
  );
  let made = 0;
  let read = 0;
  for (const configuration of stripe) {
    const until = Math.floor(clock.now().getTime() / 1000);
    const since = (await cursorOf(scope, configuration)) - REREAD_SECONDS;
    const secretKey = (await openedSettings(configuration)).secret_key ?? "";
    const { stripePayoutReader } = await import("../gateways/stripe/payouts.ts");
    const payouts = await stripePayoutReader(secretKey).payoutsBetween(since, until);
    for (const found of payouts) {
      read += 1;
      if ((await recordStripePayout(environment, configuration, found)) === "created") made += 1;
    }
    await advanceCursor(scope, configuration.id, until);
  }
  return `${made} of ${read} read made`;
}

async function cursorOf(scope: Scope, configuration: GatewayConfiguration): Promise<number> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.providerPayoutCursor(scope, configuration.id),
      ConsistentRead: true,
    }),
  );
  if (typeof Item?.read_until === "number") return Item.read_until;
  return Math.floor(Date.parse(configuration.created_at) / 1000);
}

/** Moves the cursor forward only (two closes at once never move it back). */
async function advanceCursor(scope: Scope, configurationId: string, until: number): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.providerPayoutCursor(scope, configurationId),
        UpdateExpression: "SET #until = :until, #type = :type",
        ConditionExpression: "attribute_not_exists(#until) OR #until < :until",
        ExpressionAttributeNames: { "#until": "read_until", "#type": "type" },
        ExpressionAttributeValues: { ":until": until, ":type": "payout-cursor" },
      }),
    );
  } catch (error) {
    if (conditionFailedItem(error) === null) throw error;
  }
}

/** The PaymentIntent a balance transaction is about, when its source tells it. */
function paymentIntentOf(transaction: StripeBalanceTransaction): string | null {
  const source = transaction.source;
  if (source === null || typeof source !== "object") return null;
  return source.payment_intent ?? null;
}

function typeOf(transaction: StripeBalanceTransaction): PayoutItemType {
  const source = typeof transaction.source === "object" ? transaction.source?.object : undefined;
  if (transaction.type === "charge" || transaction.type === "payment") return "sale";
  if (transaction.type === "refund" || transaction.type === "payment_refund") return "refund";
  if (source === "dispute" || transaction.type.startsWith("dispute")) return "chargeback";
  if (transaction.type.includes("fee")) return "fee";
  if (transaction.type === "adjustment") return "adjustment";
  return "other";
}

/** Stripe's fee details as our breakdown: its own fee, an application's fee, taxes; the rest `other_fee`. */
function breakdownOf(
  transaction: StripeBalanceTransaction,
  written: (minor: number) => string,
): FeeBreakdown {
  const of = (type: string) =>
    transaction.fee_details
      .filter((detail) => detail.type === type)
      .reduce((sum, detail) => sum + detail.amount, 0);
  const gateway = of("stripe_fee");
  const markup = of("application_fee");
  const other = transaction.fee - gateway - markup;
  return {
    scheme_fee: written(0),
    interchange_fee: written(0),
    gateway_fee: written(gateway),
    markup_fee: written(markup),
    acquirer_fee: written(0),
    other_fee: written(other),
  };
}

async function recordStripePayout(
  environment: ProjectEnvironment,
  configuration: GatewayConfiguration,
  { payout: found, transactions }: StripePayoutWithItems,
): Promise<"created" | "exists"> {
  const { fromStripeAmount } = await import("../gateways/stripe/wire.ts");
  const scope = environment.id;
  const currency = found.currency.toUpperCase();
  const written = (minor: number) => fromStripeAmount(minor, currency);
  const payoutId = derivedId(
    "payout",
    new Date(found.created * 1000),
    `${scope}|${configuration.id}|${found.id}`,
  );
  const moved = transactions.filter((transaction) => transaction.type !== "payout");
  const matched = await transactionsOfPayments(
    scope,
    configuration.id,
    moved.flatMap((transaction) => paymentIntentOf(transaction) ?? []),
  );
  const items = moved.map((transaction): PayoutItem => {
    const intent = paymentIntentOf(transaction);
    const record = intent ? matched.get(intent) : undefined;
    const item: PayoutItem = {
      id: derivedId("payoutItem", new Date(transaction.created * 1000), `${payoutId}|${transaction.id}`),
      project_id: scope,
      payout_id: payoutId,
      transaction_id: record?.id ?? null,
      type: typeOf(transaction),
      gateway_resource_id:
        intent ??
        (typeof transaction.source === "string" ? transaction.source : (transaction.source?.id ?? null)),
      amount: written(transaction.amount),
      fees: written(transaction.fee),
      currency,
      metadata: { balance_transaction: transaction.id, stripe_type: transaction.type },
      created_at: new Date(transaction.created * 1000).toISOString(),
      breakdown: breakdownOf(transaction, written),
      reconciled: true,
      mismatch: null,
    };
    const mismatch = providerItemMismatch(item, record);
    return { ...item, reconciled: mismatch === null, mismatch };
  });
  const sum = (type: PayoutItemType) =>
    moved
      .filter((transaction) => typeOf(transaction) === type)
      .reduce((total, transaction) => total + transaction.amount, 0);
  const count = (type: PayoutItemType) => items.filter((item) => item.type === type).length;
  const fees = moved.reduce((total, transaction) => total + transaction.fee, 0);
  const sales = sum("sale");
  const refunds = -sum("refund");
  const chargebacks = -sum("chargeback");
  const adjustments = found.amount - (sales - refunds - chargebacks - fees);
  const unmatched = items.filter((item) => !item.reconciled).length;
  const now = nowIn(environment);
  const payout: Payout = {
    id: payoutId,
    project_id: scope,
    status: found.status,
    amount: written(found.amount),
    currency,
    metadata: found.metadata ?? {},
    bank_name: null,
    bank_summary: found.statement_descriptor ?? found.description ?? null,
    sales_transactions: count("sale"),
    sales_volume: written(sales),
    refunds_transactions: count("refund"),
    refunds_volume: written(refunds),
    chargebacks_transactions: count("chargeback"),
    chargebacks_volume: written(chargebacks),
    fees: written(fees),
    adjustments: written(adjustments),
    reserve: written(0),
    settled_at: new Date(found.arrival_date * 1000).toISOString(),
    created_at: now.toISOString(),
    gateway_configuration_id: configuration.id,
    gateway_name: "stripe",
    gateway_resource_id: found.id,
    business_day: null,
    item_count: items.length,
    reconciliation: {
      status: unmatched === 0 ? "matched" : "mismatched",
      checked_at: now.toISOString(),
      unmatched_items: unmatched,
      unpaid_transactions: [],
    },
    deleted_at: null,
  };
  await putPayoutItems(items);
  const outcome = await insertPayout(
    payout,
    eventWrite(scope, "payout.created", { payout: presentPayout(payout) }, now),
  );
  logger.info("Stripe payout read", {
    payout_id: payoutId,
    stripe_payout: found.id,
    items: items.length,
    outcome,
  });
  return outcome;
}
