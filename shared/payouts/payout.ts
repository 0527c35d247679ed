import { createHash } from "node:crypto";
import { encodeTime } from "ulid";
import { ID_PREFIXES } from "../ids.ts";
import type { FeeBreakdown } from "./fees.ts";

/**
 * A payout: what a provider transferred to the merchant's bank for one business day, one gateway
 * configuration and one currency (negative when refunds and chargebacks exceed sales: the provider
 * debits the merchant), with its items, each a money movement matched to our transaction. The
 * reference's Payout and PayoutItem shapes, plus the configuration that paid it and what its
 * reconciliation found.
 */
/** The sandbox gateway's are paid at once; a provider's as it reports (Stripe's payout statuses). */
export type PayoutStatus = "paid" | "pending" | "in_transit" | "canceled" | "failed";

/** What matching the payout against our transactions found (`close.ts`, `reconcile.ts`). */
export interface Reconciliation {
  status: "matched" | "mismatched";
  checked_at: string;
  /** Items whose transaction is unknown or whose amount differs from what the transaction settled. */
  unmatched_items: number;
  /** Transactions settled through the configuration that day that no item of this payout pays out. */
  unpaid_transactions: string[];
}

export interface Payout {
  id: string;
  project_id: string;
  status: PayoutStatus;
  amount: string;
  currency: string;
  metadata: Record<string, string>;
  bank_name: string | null;
  bank_summary: string | null;
  sales_transactions: number;
  sales_volume: string;
  refunds_transactions: number;
  refunds_volume: string;
  chargebacks_transactions: number;
  chargebacks_volume: string;
  fees: string;
  adjustments: string;
  reserve: string;
  settled_at: string;
  created_at: string;
  gateway_configuration_id: string;
  gateway_name: string;
  /** The provider's own id of the payout (a Stripe `po_…`); the day for the sandbox gateway's. */
  gateway_resource_id: string;
  /** The business day it pays out (the sandbox gateway's), `YYYY-MM-DD`. */
  business_day: string | null;
  item_count: number;
  reconciliation: Reconciliation;
  /** Set by `DELETE`: the payout is gone for the API; its record stays so no close makes it again. */
  deleted_at: string | null;
}

export type PayoutItemType = "sale" | "refund" | "chargeback" | "adjustment" | "fee" | "other";

export interface PayoutItem {
  id: string;
  project_id: string;
  payout_id: string;
  transaction_id: string | null;
  type: PayoutItemType;
  gateway_resource_id: string | null;
  /** Signed: a sale adds to the payout, a refund or a chargeback takes from it. */
  amount: string;
  fees: string;
  currency: string;
  metadata: Record<string, string>;
  created_at: string;
  breakdown: FeeBreakdown;
  /** Whether the item matches what our transaction settled. */
  reconciled: boolean;
  /** Why it does not, when it does not. */
  mismatch: string | null;
}

export function presentPayout(payout: Payout) {
  return {
    id: payout.id,
    project_id: payout.project_id,
    status: payout.status,
    amount: payout.amount,
    currency: payout.currency,
    metadata: payout.metadata,
    bank_name: payout.bank_name,
    bank_summary: payout.bank_summary,
    sales_transactions: payout.sales_transactions,
    sales_volume: payout.sales_volume,
    refunds_transactions: payout.refunds_transactions,
    refunds_volume: payout.refunds_volume,
    chargebacks_transactions: payout.chargebacks_transactions,
    chargebacks_volume: payout.chargebacks_volume,
    fees: payout.fees,
    adjustments: payout.adjustments,
    reserve: payout.reserve,
    settled_at: payout.settled_at,
    created_at: payout.created_at,
    gateway_configuration_id: payout.gateway_configuration_id,
    gateway_resource_id: payout.gateway_resource_id,
    reconciliation: payout.reconciliation,
  };
}

export type PresentedPayout = ReturnType<typeof presentPayout>;

export function presentPayoutItem(item: PayoutItem) {
  return {
    id: item.id,
    project_id: item.project_id,
    payout_id: item.payout_id,
    transaction_id: item.transaction_id,
    type: item.type,
    gateway_resource_id: item.gateway_resource_id,
    amount: item.amount,
    fees: item.fees,
    metadata: item.metadata,
    created_at: item.created_at,
    breakdown: item.breakdown,
    reconciled: item.reconciled,
    mismatch: item.mismatch,
  };
}

export type PresentedPayoutItem = ReturnType<typeof presentPayoutItem>;

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * An id derived from what it is for, in the shape of every id (prefix + ULID): the time part is
 * `at` (so payouts list in the order of their days), the random part 80 bits of a hash of `what`.
 * The same payout or item is always the same id: a close run twice writes the same items.
 */
export function derivedId(kind: "payout" | "payoutItem", at: Date, what: string): string {
  const hash = createHash("sha256").update(what).digest();
  let bits = 0n;
  for (let index = 0; index < 10; index++) bits = (bits << 8n) | BigInt(hash[index] as number);
  let random = "";
  for (let index = 0; index < 16; index++) {
    random = (CROCKFORD[Number(bits & 31n)] as string) + random;
    bits >>= 5n;
  }
  return `${ID_PREFIXES[kind]}${encodeTime(at.getTime(), 10)}${random}`;
}
