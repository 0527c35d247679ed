import type { DetailInput } from "../invoices/schema.ts";
import type { Charge, ChargeLine } from "./charges.ts";
import type { Subscription } from "./subscription.ts";

/**
 * A renewal's lines as the merchant reads them: on the renewal's invoice (`details`) and in the
 * subscription's events (`charge`).
 *
 * On the invoice, a detail's `amount` is what one unit costs, never negative (as every invoice
 * detail); its `type` says which way it counts: `plan`, `addon` and `proration` add, `discount`,
 * `proration-credit` and `credit` take away. `metadata.line_amount` is the line's signed total, and
 * the period it pays for is in `metadata.period_start`/`period_end`.
 */
function detailType(line: ChargeLine): string {
  if (line.type === "proration" && line.amount.startsWith("-")) return "proration-credit";
  return line.type;
}

const magnitude = (amount: string) => (amount.startsWith("-") ? amount.slice(1) : amount);

export function invoiceDetails(charge: Charge): DetailInput[] {
  return charge.lines.map((line) => {
    const metadata: Record<string, string> = { line_amount: line.amount };
    for (const key of ["addon_id", "discount_id", "coupon_id", "period_start", "period_end"] as const) {
      const value = line[key];
      if (value !== undefined) metadata[key] = value;
    }
    return {
      name: line.name,
      type: detailType(line),
      amount: magnitude(line.unit_amount),
      quantity: line.quantity,
      metadata,
    } as DetailInput;
  });
}

/** The charge of the subscription's last fixed iteration, as events show it; null before any. */
export function lastCharge(subscription: Subscription): Charge | null {
  return subscription.due_charge ?? null;
}
