import { nowIn } from "../clock.ts";
import type { TransactItem } from "../db/transactions.ts";
import { type EventName, eventWrites } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { busy, conflict, notFound } from "../http/errors.ts";
import { readFlag } from "../http/flags.ts";
import type { Input } from "../http/input.ts";
import { isId } from "../ids.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";
import { readyForChange, type Timing, upcomingCharge } from "./changes.ts";
import type { Charge, Proration } from "./charges.ts";
import { prorationDate } from "./schema.ts";
import {
  commitSubscriptionChange,
  findSubscription,
  subscriptionReplace,
  type VersionedSubscription,
} from "./store.ts";
import { presentSubscription, type Subscription } from "./subscription.ts";

/**
 * A change of what a subscription bills (an add-on, a discount), applied as every subscription
 * change is: to the version read, the due charge fixed first (`readyForChange`), committed with its
 * event on the condition that the subscription is still that version, and built again from a fresh
 * read when another change came first. A preview builds the same change and writes nothing.
 */
const ATTEMPTS = 12;
/** A short random pause before building a change again, so that racing changes spread out. */
const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, attempt * (5 + Math.random() * 20)));

export const concurrentChange = (id: string) =>
  busy("request.subscription.concurrent-update", `Subscription ${id} is being changed by another request.`);

/** The subscription, or 404. */
export async function subscriptionOf(caller: Caller, id: string): Promise<VersionedSubscription> {
  const found = isId("subscription", id) ? await findSubscription(caller.projectId, id) : undefined;
  if (!found) throw notFound("subscription", id);
  return found;
}

/** `prorate`, `proration_date` and `preview`, from the body or (a `DELETE`) the query. */
export function readTiming(input: { query: Input; body: Input }): Timing {
  const fields = parseInput(z.object({ proration_date: prorationDate }), {
    proration_date: input.body.proration_date ?? input.query.proration_date,
  });
  return {
    prorate: readFlag(input, "prorate"),
    at: fields.proration_date ? new Date(fields.proration_date) : null,
    preview: readFlag(input, "preview"),
  };
}

/** What a change bills, answered with it. */
export type BillingAnswer = {
  /** True when nothing was changed: what the change would bill. */
  preview: boolean;
  /** Charged (or credited, negative) with the next renewal for the rest of the current period. */
  proration: Proration | null;
  /** The next renewal as it would be charged if nothing else changed. */
  upcoming_charge: Charge | null;
};

export interface Built<A> {
  next: Subscription;
  answer: A;
  proration: Proration | null;
  /** Written in the same transaction (a coupon's redemption), after the subscription and events. */
  writes?: TransactItem[];
}

export async function applyBillingChange<A extends object>(
  caller: Caller,
  subscriptionId: string,
  options: {
    preview: boolean;
    event: EventName;
    refusal?: (error: unknown, writesAt: number) => Promise<unknown>;
  },
  build: (subscription: Subscription, now: Date) => Built<A> | Promise<Built<A>>,
): Promise<A & BillingAnswer> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    if (attempt > 1) await pause(attempt);
    const now = nowIn(caller.environment);
    const current = await subscriptionOf(caller, subscriptionId);
    if (current.subscription.canceled)
      throw conflict("request.subscription.canceled", `Subscription ${subscriptionId} is canceled.`);
    const built = await build(readyForChange(current.subscription, now), now);
    const next = { ...built.next, updated_at: now.toISOString() };
    const billing: BillingAnswer = {
      preview: options.preview,
      proration: built.proration,
      upcoming_charge: upcomingCharge(next, now),
    };
    if (options.preview) return { ...built.answer, ...billing };
    const events = eventWrites(
      caller.projectId,
      [
        {
          name: options.event,
          data: { subscription: presentSubscription(next, now), ...built.answer, proration: built.proration },
        },
      ],
      now,
    );
    const writes = [subscriptionReplace(current, next), ...events];
    let outcome: "committed" | "changed";
    try {
      outcome = await commitSubscriptionChange([...writes, ...(built.writes ?? [])]);
    } catch (error) {
      if (options.refusal) throw await options.refusal(error, writes.length);
      throw error;
    }
    if (outcome === "committed") return { ...built.answer, ...billing };
  }
  throw concurrentChange(subscriptionId);
}
