import { clock } from "../clock.ts";
import type { PageRequest } from "../db/listing.ts";
import type { TransactItem } from "../db/transactions.ts";
import { eventWrite } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { busy, conflict, invalidField, notFound } from "../http/errors.ts";
import { PLAN_ID_PATTERN } from "../ids.ts";
import { amountProblemIn, compareAmounts, isAmount } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import { newPlan, type Plan, type PresentedPlan, presentPlan } from "./plan.ts";
import { createPlanInput, type PlanChanges, updatePlanInput } from "./schema.ts";
import { findPlan, insertPlan, listPlans, replacePlan, type VersionedPlan } from "./store.ts";

/** Plans: create under the merchant's id, read, list, change what may change, end. */
export const PLAN_CURSOR = { pattern: PLAN_ID_PATTERN, description: "a plan id" } as const;

const concurrentChange = (id: string) =>
  busy("request.plan.concurrent-update", `Plan ${id} is being changed by another request.`);

/** `POST /plans` */
export async function createPlan(
  caller: Caller,
  input: unknown,
  commit: (presented: PresentedPlan) => TransactItem[],
): Promise<PresentedPlan> {
  const fields = parseInput(createPlanInput, input);
  const problem = amountProblemIn(fields.amount, fields.currency);
  if (problem) throw invalidField("amount", problem);
  const now = clock.now();
  const plan = newPlan(caller, fields, now);
  const presented = presentPlan(plan);
  const outcome = await insertPlan(plan, [
    ...eventWrite(caller.projectId, "plan.created", { plan: presented }, now),
    ...commit(presented),
  ]);
  if (outcome === "duplicate") {
    throw conflict("request.plan.duplicate", `This environment already has a plan with the id ${plan.id}.`);
  }
  return presented;
}

/** A plan that can still be subscribed to (an ended one is gone for the API). */
export async function livePlan(caller: Caller, id: string): Promise<VersionedPlan> {
  const found = PLAN_ID_PATTERN.test(id) ? await findPlan(caller.projectId, id) : undefined;
  if (!found || found.value.ended_at !== null) throw notFound("plan", id);
  return found;
}

export async function getPlan(caller: Caller, id: string): Promise<PresentedPlan> {
  return presentPlan((await livePlan(caller, id)).value);
}

export async function pageOfPlans(caller: Caller, page: PageRequest) {
  const result = await listPlans(caller.projectId, page);
  return { ...result, items: result.items.map(presentPlan) };
}

/** `PUT /plans/{id}`: name, trial period, metadata and URLs; what subscriptions were made for stays. */
export async function changePlan(caller: Caller, id: string, input: unknown): Promise<PresentedPlan> {
  const fields = parseInput(updatePlanInput, input);
  const current = await livePlan(caller, id);
  refuseTermChanges(current.value, fields);
  const now = clock.now();
  const next: Plan = {
    ...current.value,
    ...(fields.name !== undefined ? { name: fields.name } : {}),
    ...(fields.trial_period !== undefined ? { trial_period: fields.trial_period } : {}),
    ...(fields.metadata !== undefined ? { metadata: fields.metadata } : {}),
    ...(fields.return_url !== undefined ? { return_url: fields.return_url } : {}),
    ...(fields.cancel_url !== undefined ? { cancel_url: fields.cancel_url } : {}),
    updated_at: now.toISOString(),
  };
  const presented = presentPlan(next);
  const outcome = await replacePlan(
    current,
    next,
    eventWrite(caller.projectId, "plan.updated", { plan: presented }, now),
  );
  if (outcome === "changed") throw concurrentChange(id);
  return presented;
}

/** The terms echoed as they are pass; any other value is a 400 naming the field. */
function refuseTermChanges(plan: Plan, fields: PlanChanges): void {
  const same = {
    id: (value: unknown) => value === plan.id,
    amount: (value: unknown) =>
      typeof value === "string" && isAmount(value) && compareAmounts(value, plan.amount) === 0,
    currency: (value: unknown) => typeof value === "string" && value.toUpperCase() === plan.currency,
    interval: (value: unknown) => value === plan.interval,
  };
  for (const [name, matches] of Object.entries(same)) {
    const value = fields[name as keyof typeof same];
    if (value !== undefined && value !== "" && !matches(value)) {
      throw invalidField(name, "cannot change: subscriptions were made for it; create another plan instead");
    }
  }
}

/** `DELETE /plans/{id}`: no new subscriptions; those made before go on with their own terms. */
export async function endPlan(caller: Caller, id: string): Promise<void> {
  const current = await livePlan(caller, id);
  const now = clock.now();
  const next: Plan = { ...current.value, ended_at: now.toISOString(), updated_at: now.toISOString() };
  const outcome = await replacePlan(
    current,
    next,
    eventWrite(caller.projectId, "plan.deleted", { plan: presentPlan(next) }, now),
  );
  if (outcome === "changed") throw concurrentChange(id);
}
