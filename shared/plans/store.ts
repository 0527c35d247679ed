import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Plan } from "./plan.ts";

/**
 * Table access for plans: one item per plan (`keys.plan`), listed and counted; every change is
 * conditional on the version read, and ending a plan on it not being ended already.
 */
const ENTITY = "plan";

export interface VersionedPlan {
  plan: Plan;
  version: number;
}

function fromItem(item: Record<string, unknown>): VersionedPlan {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...plan } = item;
  return { plan: plan as unknown as Plan, version: Number(version) };
}

function item(plan: Plan, version: number) {
  return {
    ...keys.plan(plan.project_id, plan.id),
    // Ended plans leave the listing (the index is sparse): they are never listed again.
    ...(plan.ended_at === null ? keys.listing(plan.project_id, ENTITY, plan.id) : {}),
    type: ENTITY,
    version,
    ...plan,
  };
}

/** A plan item as read from the table (`batchGet`), as a plan. */
export const planFromItem = (item: Record<string, unknown>): Plan => fromItem(item).plan;

/** Stores a new plan; `duplicate` when the environment has (or had) a plan with this id. */
export async function insertPlan(plan: Plan, alsoWrite: TransactItem[]): Promise<"created" | "duplicate"> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: item(plan, 1),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      countChange(plan.project_id, ENTITY, 1),
      ...alsoWrite,
    ]);
    return "created";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "duplicate";
    throw error;
  }
}

/** A plan of the environment, ended or not. */
export async function findPlan(scope: Scope, id: string): Promise<VersionedPlan | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.plan(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ENTITY ? fromItem(Item) : undefined;
}

export async function listPlans(scope: Scope, page: PageRequest): Promise<Page<Plan>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).plan) };
}

/**
 * Replaces a plan read at `version` (ending it when `next.ended_at` is set, which also takes it out
 * of the count); `changed` when another request changed or ended it first.
 */
export async function replacePlan(
  current: VersionedPlan,
  next: Plan,
  alsoWrite: TransactItem[],
): Promise<"replaced" | "changed"> {
  const ending = current.plan.ended_at === null && next.ended_at !== null;
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: item(next, current.version + 1),
          ConditionExpression: "#version = :version",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":version": current.version },
        },
      },
      ...(ending ? [countChange(next.project_id, ENTITY, -1)] : []),
      ...alsoWrite,
    ]);
    return "replaced";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "changed";
    throw error;
  }
}
