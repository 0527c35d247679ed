import type { Caller } from "../http/auth.ts";
import type { PlanFields } from "./schema.ts";

/**
 * A plan: what a subscription bills at each interval, under an id the merchant chooses (unique in
 * its environment, for good: an ended plan keeps its id). Ending a plan (`DELETE`) stops new
 * subscriptions to it; subscriptions made before keep their terms, which they copied.
 */
export interface Plan {
  id: string;
  project_id: string;
  name: string;
  amount: string;
  currency: string;
  interval: string;
  trial_period: string | null;
  metadata: Record<string, string>;
  return_url: string | null;
  cancel_url: string | null;
  sandbox: boolean;
  created_at: string;
  updated_at: string;
  /** When the plan was ended; null while subscriptions can be made to it. */
  ended_at: string | null;
}

export function newPlan(caller: Caller, fields: PlanFields, now: Date): Plan {
  const at = now.toISOString();
  return {
    id: fields.id,
    project_id: caller.projectId,
    name: fields.name,
    amount: fields.amount,
    currency: fields.currency,
    interval: fields.interval,
    trial_period: fields.trial_period ?? null,
    metadata: fields.metadata ?? {},
    return_url: fields.return_url ?? null,
    cancel_url: fields.cancel_url ?? null,
    sandbox: caller.sandbox,
    created_at: at,
    updated_at: at,
    ended_at: null,
  };
}

/** The plan as the API shows it (the reference's Plan shape). */
export function presentPlan(plan: Plan) {
  return {
    id: plan.id,
    project_id: plan.project_id,
    name: plan.name,
    amount: plan.amount,
    currency: plan.currency,
    interval: plan.interval,
    trial_period: plan.trial_period,
    metadata: plan.metadata,
    return_url: plan.return_url,
    cancel_url: plan.cancel_url,
    sandbox: plan.sandbox,
    created_at: plan.created_at,
  };
}

export type PresentedPlan = ReturnType<typeof presentPlan>;
