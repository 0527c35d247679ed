import { callProvider, providerTimeoutMs } from "../provider-http.ts";
import {
  type FormValue,
  formEncode,
  STRIPE_VERSION,
  type StripeError,
  type StripeList,
  stripeApiUrl,
} from "./wire.ts";

/**
 * What a Stripe account paid out: its payouts (`GET /v1/payouts`) and, for each, the balance
 * transactions it settled (`GET /v1/balance_transactions?payout=po_…`, their `source` expanded to
 * find the PaymentIntent our transaction knows as its gateway reference), with Stripe's fees
 * (`fee_details`). Read-only: nothing here moves money, so a failed read is simply read again by
 * the next close.
 */
export interface StripePayout {
  id: string;
  object: "payout";
  amount: number;
  currency: string;
  status: "paid" | "pending" | "in_transit" | "canceled" | "failed";
  arrival_date: number;
  created: number;
  description?: string | null;
  statement_descriptor?: string | null;
  metadata?: Record<string, string>;
}

export interface StripeFeeDetail {
  amount: number;
  currency: string;
  type: string;
  description?: string | null;
}

export interface StripeBalanceTransaction {
  id: string;
  object: "balance_transaction";
  type: string;
  amount: number;
  fee: number;
  net: number;
  currency: string;
  created: number;
  fee_details: StripeFeeDetail[];
  /** Expanded (`expand[]=data.source`): a charge, a refund, a dispute…; else its id. */
  source:
    | string
    | { id: string; object: string; payment_intent?: string | null; charge?: string | null }
    | null;
}

export interface StripePayoutWithItems {
  payout: StripePayout;
  transactions: StripeBalanceTransaction[];
}

/** Stripe refused the read (a revoked key, a key without the right): the close reports it. */
export class StripeReadRefused extends Error {}

const PAGE = 100;

export function stripePayoutReader(secretKey: string) {
  const get = async <T>(path: string, query: Record<string, FormValue>): Promise<T> => {
    const answer = await callProvider({
      url: `${stripeApiUrl()}${path}?${formEncode(query)}`,
      method: "GET",
      headers: { authorization: `Bearer ${secretKey}`, "stripe-version": STRIPE_VERSION },
      timeoutMs: providerTimeoutMs(),
    });
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    const error = (answer.body as { error?: StripeError } | null)?.error;
    throw new StripeReadRefused(
      `Stripe answered ${answer.status} to GET ${path}: ${error?.message ?? "no message"}`,
    );
  };

  /** Every page of a list, `starting_after` the last item of the page before. */
  async function all<T extends { id: string }>(path: string, query: Record<string, FormValue>) {
    const items: T[] = [];
    for (;;) {
      const after = items.at(-1)?.id;
      const page = await get<StripeList<T>>(path, {
        ...query,
        limit: PAGE,
        ...(after ? { starting_after: after } : {}),
      });
      items.push(...page.data);
      if (!page.has_more || page.data.length === 0) return items;
    }
  }

  return {
    /** The payouts created after `since` and up to `until` (unix seconds), with their balance transactions. */
    async payoutsBetween(since: number, until: number): Promise<StripePayoutWithItems[]> {
      const payouts = await all<StripePayout>("/v1/payouts", { created: { gt: since, lte: until } });
      const read: StripePayoutWithItems[] = [];
      for (const payout of payouts) {
        const transactions = await all<StripeBalanceTransaction>("/v1/balance_transactions", {
          payout: payout.id,
          expand: ["data.source"],
        });
        read.push({ payout, transactions });
      }
      return read;
    },
  };
}
