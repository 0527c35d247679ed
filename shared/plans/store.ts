import { keys } from "../db/keys.ts";
import { type Versioned, versionedStore } from "../db/versioned.ts";
import type { Plan } from "./plan.ts";

/**
 * Table access for plans: one item per plan (`keys.plan`), listed and counted; every change is
 * conditional on the version read, and ending a plan takes it out of the listing and the count
 * (`shared/db/versioned.ts`). An ended plan keeps its id for good.
 */
const plans = versionedStore<Plan>({
  entity: "plan",
  key: keys.plan,
  gone: (plan) => plan.ended_at !== null,
});

export type VersionedPlan = Versioned<Plan>;

export const insertPlan = plans.insert;
export const findPlan = plans.find;
export const listPlans = plans.list;
export const replacePlan = plans.replace;
/** A plan item as read from the table (`batchGet`), as a plan. */
export const planFromItem = plans.fromItem;
