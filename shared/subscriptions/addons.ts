import { type PageRequest, pageOfList } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, invalidField, notFound, validationFailed } from "../http/errors.ts";
import type { Input } from "../http/input.ts";
import { isId, newId } from "../ids.ts";
import { amountProblemIn, isZeroAmount } from "../money.ts";
import { livePlan } from "../plans/service.ts";
import { parseInput } from "../validation/parse.ts";
import { applyBillingChange, readTiming, subscriptionOf } from "./billing-change.ts";
import { addonValue, MAX_ADDONS, withProration } from "./changes.ts";
import type { Addon } from "./charges.ts";
import { type AddonFields, createAddonInput, updateAddonInput } from "./schema.ts";
import type { Subscription } from "./subscription.ts";

/**
 * Add-ons: `/subscriptions/{id}/addons`. An add-on is billed with each renewal (`amount ×
 * quantity`), from a plan of the same currency and interval (`plan_id`, its name and amount unless
 * given) or ad hoc (`name`, `amount`). Adding, changing or removing one mid-period is prorated when
 * asked (`prorate`, `proration_date`); `preview` answers what it would bill and changes nothing.
 * Add-ons live in the subscription's own item, so that every change of them is conditional on the
 * subscription's version, like its renewal.
 */

export function presentAddon(addon: Addon, subscription: Subscription) {
  return {
    id: addon.id,
    project_id: subscription.project_id,
    subscription_id: subscription.id,
    plan_id: addon.plan_id,
    type: addon.type,
    name: addon.name,
    amount: addon.amount,
    currency: subscription.currency,
    quantity: addon.quantity,
    metadata: addon.metadata,
    sandbox: subscription.sandbox,
    created_at: addon.created_at,
    updated_at: addon.updated_at,
  };
}

export type PresentedAddon = ReturnType<typeof presentAddon>;

function addonOf(subscription: Subscription, addonId: string): Addon {
  const addon = isId("addon", addonId)
    ? (subscription.addons ?? []).find((candidate) => candidate.id === addonId)
    : undefined;
  if (!addon) throw notFound("addon", addonId);
  return addon;
}

/** The plan an add-on bills, checked against the subscription: same currency and interval. */
async function addonPlan(caller: Caller, planId: string, subscription: Subscription) {
  const plan = (await livePlan(caller, planId)).value;
  if (plan.currency !== subscription.currency)
    throw invalidField("plan_id", `must bill in ${subscription.currency}, the subscription's currency`);
  if (plan.interval !== subscription.interval)
    throw invalidField("plan_id", `must bill every ${subscription.interval}, as the subscription does`);
  return plan;
}

function checkedAmount(amount: string, subscription: Subscription): string {
  const problem = amountProblemIn(amount, subscription.currency);
  if (problem) throw invalidField("amount", problem);
  if (isZeroAmount(amount)) throw invalidField("amount", "must be above zero");
  return amount;
}

/** `POST /subscriptions/{id}/addons` */
export async function createAddon(
  caller: Caller,
  subscriptionId: string,
  input: { query: Input; body: Input },
) {
  const fields = parseInput(createAddonInput, input.body);
  const timing = readTiming(input);
  const { subscription: before } = await subscriptionOf(caller, subscriptionId);
  const plan = fields.plan_id ? await addonPlan(caller, fields.plan_id, before) : undefined;
  const name = fields.name ?? plan?.name;
  const amount = fields.amount ?? plan?.amount;
  const missing = [
    ...(name === undefined ? [{ name: "name", message: "is required without a plan_id" }] : []),
    ...(amount === undefined || amount === null
      ? [{ name: "amount", message: "is required without a plan_id" }]
      : []),
  ];
  if (missing.length > 0) throw validationFailed(`missing-${missing[0]?.name}`, missing);
  const id = newId("addon");
  return applyBillingChange(
    caller,
    subscriptionId,
    { preview: timing.preview, event: "subscription.addon.created" },
    (subscription, now) => {
      const addons = subscription.addons ?? [];
      if (addons.length >= MAX_ADDONS)
        throw new ApiError(
          400,
          "request.subscription.too-many-addons",
          `A subscription holds at most ${MAX_ADDONS} add-ons.`,
        );
      const addon: Addon = {
        id,
        plan_id: plan?.id ?? null,
        type: "recurring",
        name: name as string,
        amount: checkedAmount(amount as string, subscription),
        quantity: fields.quantity ?? 1,
        metadata: fields.metadata ?? {},
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      };
      const { subscription: next, proration } = withProration(
        { ...subscription, addons: [...addons, addon] },
        {
          perPeriod: addonValue(addon, subscription.currency),
          name: `${addon.name} × ${addon.quantity} added`,
          addonId: addon.id,
        },
        timing,
        now,
      );
      return { next, proration, answer: { addon: presentAddon(addon, next) } };
    },
  );
}

/** `PUT /subscriptions/{id}/addons/{addon_id}`: name, amount, quantity (or its increment), metadata. */
export async function updateAddon(
  caller: Caller,
  subscriptionId: string,
  addonId: string,
  input: { query: Input; body: Input },
) {
  const fields: AddonFields = parseInput(updateAddonInput, input.body);
  const timing = readTiming(input);
  const { subscription: before } = await subscriptionOf(caller, subscriptionId);
  const known = addonOf(before, addonId);
  const plan =
    fields.plan_id && fields.plan_id !== known.plan_id
      ? await addonPlan(caller, fields.plan_id, before)
      : undefined;
  return applyBillingChange(
    caller,
    subscriptionId,
    { preview: timing.preview, event: "subscription.addon.updated" },
    (subscription, now) => {
      const addon = addonOf(subscription, addonId);
      // An increment counts from the quantity stored now (the client's may be stale); the quantity
      // sent with it is the client's copy of that and is not a change.
      const quantity =
        fields.increment_quantity_by !== undefined
          ? addon.quantity + fields.increment_quantity_by
          : (fields.quantity ?? addon.quantity);
      if (quantity < 1)
        throw invalidField(
          "increment_quantity_by",
          `would leave ${quantity} (of ${addon.quantity}): delete the add-on to remove it`,
        );
      const changed: Addon = {
        ...addon,
        plan_id: plan?.id ?? addon.plan_id,
        name: fields.name ?? plan?.name ?? addon.name,
        amount: checkedAmount(fields.amount ?? plan?.amount ?? addon.amount, subscription),
        quantity,
        metadata: fields.metadata ?? addon.metadata,
        updated_at: now.toISOString(),
      };
      const change = addonValue(changed, subscription.currency) - addonValue(addon, subscription.currency);
      const describe =
        changed.quantity !== addon.quantity
          ? `${changed.name} × ${addon.quantity} → ${changed.quantity}`
          : `${changed.name}: ${addon.amount} → ${changed.amount}`;
      const { subscription: next, proration } = withProration(
        {
          ...subscription,
          addons: (subscription.addons ?? []).map((one) => (one.id === addonId ? changed : one)),
        },
        { perPeriod: change, name: describe, addonId },
        timing,
        now,
      );
      return { next, proration, answer: { addon: presentAddon(changed, next) } };
    },
  );
}

/** `DELETE /subscriptions/{id}/addons/{addon_id}`: not billed from the next renewal (or now, prorated). */
export async function deleteAddon(
  caller: Caller,
  subscriptionId: string,
  addonId: string,
  input: { query: Input; body: Input },
) {
  const timing = readTiming(input);
  return applyBillingChange(
    caller,
    subscriptionId,
    { preview: timing.preview, event: "subscription.addon.deleted" },
    (subscription, now) => {
      const addon = addonOf(subscription, addonId);
      const { subscription: next, proration } = withProration(
        { ...subscription, addons: (subscription.addons ?? []).filter((one) => one.id !== addonId) },
        {
          perPeriod: -addonValue(addon, subscription.currency),
          name: `${addon.name} × ${addon.quantity} removed`,
          addonId,
        },
        timing,
        now,
      );
      return { next, proration, answer: { addon: presentAddon(addon, next) } };
    },
  );
}

export async function getAddon(caller: Caller, subscriptionId: string, addonId: string) {
  const { subscription } = await subscriptionOf(caller, subscriptionId);
  return presentAddon(addonOf(subscription, addonId), subscription);
}

export async function pageOfAddons(caller: Caller, subscriptionId: string, page: PageRequest) {
  const { subscription } = await subscriptionOf(caller, subscriptionId);
  const result = pageOfList(subscription.addons ?? [], page);
  return { ...result, items: result.items.map((addon) => presentAddon(addon, subscription)) };
}
