import { nowIn } from "../clock.ts";
import type { PageRequest } from "../db/listing.ts";
import { eventWrite } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { busy, notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import {
  type PresentedPayout,
  type PresentedPayoutItem,
  presentPayout,
  presentPayoutItem,
} from "./payout.ts";
import { itemsCheckedNow, reconciliationNow } from "./reconcile.ts";
import {
  deletePayoutItems,
  findPayout,
  listPayouts,
  markPayoutDeleted,
  pageOfPayoutItems,
  type VersionedPayout,
} from "./store.ts";

/** Payouts as the API serves them: read, list, list a payout's items, delete one with its items. */

/** A payout of the caller's environment that is not deleted. */
async function payoutOf(caller: Caller, id: string): Promise<VersionedPayout> {
  const found = isId("payout", id) ? await findPayout(caller.projectId, id) : undefined;
  if (!found || found.payout.deleted_at !== null) throw notFound("payout", id);
  return found;
}

/** A payout; a provider's checked again against our transactions as they stand (`reconcile.ts`). */
export async function getPayout(caller: Caller, id: string): Promise<PresentedPayout> {
  const { payout } = await payoutOf(caller, id);
  return presentPayout({ ...payout, reconciliation: await reconciliationNow(payout, caller.environment) });
}

export async function pageOfPayouts(caller: Caller, page: PageRequest) {
  const result = await listPayouts(caller.projectId, page);
  return { ...result, items: result.items.map(presentPayout) };
}

export async function pageOfItems(caller: Caller, payoutId: string, page: PageRequest) {
  const { payout } = await payoutOf(caller, payoutId);
  const result = await pageOfPayoutItems(caller.projectId, payout, page);
  const items =
    payout.gateway_name === "sandbox" ? result.items : await itemsCheckedNow(payout, result.items);
  return { ...result, items: items.map((item): PresentedPayoutItem => presentPayoutItem(item)) };
}

/**
 * `DELETE /payouts/{id}`: the payout leaves the API at once (one conditional write, with its event
 * and the count), then its items are deleted. Its record stays, marked, so that a daily close run
 * again never makes it anew. A delete cut off before its items were gone is finished by the next
 * `DELETE` of the same id (which then answers 404: the payout is already gone).
 */
export async function deletePayout(caller: Caller, id: string): Promise<void> {
  const found = isId("payout", id) ? await findPayout(caller.projectId, id) : undefined;
  if (!found) throw notFound("payout", id);
  if (found.payout.deleted_at !== null) {
    await deletePayoutItems(caller.projectId, id);
    throw notFound("payout", id);
  }
  const now = nowIn(caller.environment);
  const outcome = await markPayoutDeleted(
    found,
    now.toISOString(),
    eventWrite(caller.projectId, "payout.deleted", { payout: presentPayout(found.payout) }, now),
  );
  if (outcome === "changed") {
    throw busy("request.payout.concurrent-update", `Payout ${id} is being changed by another request.`);
  }
  await deletePayoutItems(caller.projectId, id);
}
