import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../../config.ts";
import { dynamo } from "../../db/client.ts";
import { keys, type Scope } from "../../db/keys.ts";
import { failedConditions, transactWrite } from "../../db/transactions.ts";
import { fromMinorUnits, toMinorUnits } from "../../money.ts";

/**
 * The sandbox's gift cards: test card numbers that hold vouchers (an amount, a currency, an expiry
 * date), as a provider that issues stored-value cards keeps them. An authorization takes its amount
 * from the card's balance (declined `card.no-money` beyond it), a void gives it back, a refund gives
 * back what it refunds; each move is kept under its operation's reference, so an operation repeated
 * moves nothing twice, and the balance changes with a condition that it never goes below zero, so
 * two authorizations at once cannot spend the same money. Vouchers are spent soonest-expiring first;
 * an expired voucher holds nothing. `GET /balances/tokens/{id}` reads a card's balance
 * (`balanceOf`).
 */
export interface Voucher {
  amount: string;
  currency: string;
  /** The last day it can be spent (UTC), `YYYY-MM-DD`. */
  expiry: string;
}

export const SANDBOX_GIFT_CARDS: Readonly<Record<string, readonly Voucher[]>> = {
  // 50.00 EUR: 20.00 spent first (it expires first), then 30.00.
  "4000000000007007": [
    { amount: "30.00", currency: "EUR", expiry: "2099-12-31" },
    { amount: "20.00", currency: "EUR", expiry: "2099-06-30" },
  ],
  // 10.00 EUR left beside a voucher of 25.00 that expired.
  "4000000000007015": [
    { amount: "25.00", currency: "EUR", expiry: "2021-01-31" },
    { amount: "10.00", currency: "EUR", expiry: "2099-12-31" },
  ],
};

export const giftCardVouchers = (number: string): readonly Voucher[] | undefined =>
  SANDBOX_GIFT_CARDS[number];

/** The gift card of a card known by its public fields (its IIN and last four digits), as a balance asks. */
export function giftCardOf(iin: string, last4: string): readonly Voucher[] | undefined {
  const number = Object.keys(SANDBOX_GIFT_CARDS).find(
    (candidate) => candidate.startsWith(iin) && candidate.endsWith(last4),
  );
  return number === undefined ? undefined : SANDBOX_GIFT_CARDS[number];
}

const isLive = (voucher: Voucher, now: Date) => voucher.expiry >= now.toISOString().slice(0, 10);

/** The card's spendable total in minor units (its unexpired vouchers), in its vouchers' currency. */
export function spendableMinor(vouchers: readonly Voucher[], now: Date): bigint {
  return vouchers
    .filter((voucher) => isLive(voucher, now))
    .reduce((total, voucher) => total + toMinorUnits(voucher.amount, voucher.currency), 0n);
}

export interface GiftCardBalance {
  vouchers: Voucher[];
  available_balance: { amount: string; currency: string; expiry: string | null };
}

/**
 * What is left on each unexpired voucher once `spentMinor` is taken, soonest-expiring first, and the
 * total available (its expiry: the soonest of the vouchers that still hold money).
 */
export function balanceOf(vouchers: readonly Voucher[], spentMinor: bigint, now: Date): GiftCardBalance {
  const currency = vouchers[0]?.currency ?? "EUR";
  let toTake = spentMinor;
  const left = [...vouchers]
    .filter((voucher) => isLive(voucher, now))
    .sort((a, b) => (a.expiry < b.expiry ? -1 : 1))
    .map((voucher) => {
      const amount = toMinorUnits(voucher.amount, voucher.currency);
      // bigint: no Math.min.
      let taken = amount;
      if (toTake < amount) taken = toTake;
      toTake -= taken;
      return { ...voucher, minor: amount - taken };
    });
  const total = left.reduce((sum, voucher) => sum + voucher.minor, 0n);
  const holding = left.filter((voucher) => voucher.minor > 0n);
  return {
    vouchers: left.map(({ minor, ...voucher }) => ({
      ...voucher,
      amount: fromMinorUnits(minor, voucher.currency),
    })),
    available_balance: {
      amount: fromMinorUnits(total, currency),
      currency,
      expiry: holding[0]?.expiry ?? null,
    },
  };
}

/** What the sandbox has spent of the card (minor units). */
export async function spentOn(scope: Scope, fingerprint: string): Promise<bigint> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.sandboxCard(scope, fingerprint),
      ConsistentRead: true,
    }),
  );
  return BigInt(Number(Item?.gift_card_spent ?? 0));
}

const SPENT_NAMES = { "#spent": "gift_card_spent", "#type": "type" };

/**
 * Takes `amount` for the authorization `reference`: `taken` (also when this reference took it
 * already) or `insufficient` when the card's balance is below it.
 */
export async function spend(
  scope: Scope,
  card: { fingerprint: string; number: string },
  reference: string,
  amount: string,
  now: Date,
): Promise<"taken" | "insufficient"> {
  const vouchers = giftCardVouchers(card.number) ?? [];
  const currency = vouchers[0]?.currency ?? "EUR";
  const minor = toMinorUnits(amount, currency);
  const spendable = spendableMinor(vouchers, now);
  if (minor > spendable) return "insufficient";
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: {
            ...keys.sandboxGiftCardMove(scope, reference, "spend"),
            type: "sandbox-gift-card-move",
            fingerprint: card.fingerprint,
            currency,
            amount_minor: Number(minor),
          },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      {
        Update: {
          TableName: config.tableName,
          Key: keys.sandboxCard(scope, card.fingerprint),
          UpdateExpression: "ADD #spent :amount SET #type = :type",
          // What is spent stays within what the card holds.
          ConditionExpression: "attribute_not_exists(#spent) OR #spent <= :most",
          ExpressionAttributeNames: SPENT_NAMES,
          ExpressionAttributeValues: {
            ":amount": Number(minor),
            ":type": "sandbox-card",
            ":most": Number(spendable - minor),
          },
        },
      },
    ]);
    return "taken";
  } catch (error) {
    const failed = failedConditions(error);
    if (failed?.includes(0)) return "taken";
    if (failed?.includes(1)) return "insufficient";
    throw error;
  }
}

/**
 * Gives back what the authorization `authorization` took: all of it (a void, `amount` undefined),
 * or `amount` of it under the refund's own `reference`. Nothing when it took nothing (not a gift
 * card) or when this reference gave it back already.
 */
export async function giveBack(
  scope: Scope,
  authorization: string,
  move: { reference: string; amount?: string },
): Promise<void> {
  const { Item: spent } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.sandboxGiftCardMove(scope, authorization, "spend"),
      ConsistentRead: true,
    }),
  );
  if (!spent) return;
  const currency = String(spent.currency);
  const minor =
    move.amount === undefined ? BigInt(Number(spent.amount_minor)) : toMinorUnits(move.amount, currency);
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: {
            ...keys.sandboxGiftCardMove(scope, move.reference, "credit"),
            type: "sandbox-gift-card-move",
            fingerprint: spent.fingerprint,
            currency,
            amount_minor: Number(minor),
          },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      {
        Update: {
          TableName: config.tableName,
          Key: keys.sandboxCard(scope, String(spent.fingerprint)),
          UpdateExpression: "ADD #spent :amount",
          ConditionExpression: "#spent >= :amount_back",
          ExpressionAttributeNames: { "#spent": "gift_card_spent" },
          ExpressionAttributeValues: { ":amount": -Number(minor), ":amount_back": Number(minor) },
        },
      },
    ]);
  } catch (error) {
    // Given back already under this reference.
    if (failedConditions(error)?.includes(0)) return;
    throw error;
  }
}
