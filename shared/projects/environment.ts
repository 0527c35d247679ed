import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import type { ApiKeyRecord } from "./keys.ts";

/**
 * A project has two environments, sandbox and live, each addressed by its own project id
 * (`test-proj_…` and `proj_…`) with its own private key. Everything a merchant stores lives
 * under one environment; the environment's id is the scope of every key of its data.
 *
 * This module is what every request needs (authentication reads the environment), so it imports
 * nothing beyond the table: creating projects lives in `project.ts`.
 */
export interface ProjectEnvironment {
  id: string;
  root_project_id: string;
  name: string;
  sandbox: boolean;
  /** The hash of the key the environment was created with (`api_keys` lists every key once one changed). */
  key_hash: string;
  /** The environment's keys, from the first creation, roll or revocation on (`shared/projects/api-keys.ts`). */
  api_keys?: ApiKeyRecord[];
  /** Counts the changes of `api_keys`: each is conditional on the one it read. */
  keys_version?: number;
  created_at: string;
  /** Where the environment's events are POSTed (`PUT /projects/{id}`); null until set. */
  webhook_url?: string | null;
  /** Signs every webhook; environments created before it existed get one on first need (`shared/webhooks`). */
  webhook_signing_secret?: string;
  /** A sandbox environment's clock, ahead of real time by this much (`shared/clock.ts`, `POST /sandbox/clock`). */
  clock_offset_ms?: number;
  /** The environment of the platform that created this one (`POST /supervised-projects`). */
  supervisor_project_id?: string | null;
  /** Whether that supervisor may read this environment's data with its own key (`supervisor-access.ts`). */
  supervisor_access?: "none" | "read";
  /** Its settings as created (`shared/projects/supervision.ts`). */
  default_currency?: string | null;
  dunning_configuration?: DunningStep[] | null;
  applepay_settings?: Record<string, string> | null;
  public_metadata?: Record<string, string> | null;
  /** When the environment was deleted (`DELETE /projects/{id}`): it is then unknown to every request and job. */
  deleted_at?: string | null;
}

/**
 * A step of an environment's dunning: retry a declined renewal `delay_in_days` after it was due, and
 * after the last retry, cancel (the subscriptions' default is 1, 3 and 7 days, `shared/subscriptions`).
 */
export interface DunningStep {
  action: "retry" | "cancel";
  delay_in_days: number;
}

/** The retry days of an environment's dunning configuration; undefined when it set none. */
export function dunningDelaysDays(environment: ProjectEnvironment): number[] | undefined {
  const steps = environment.dunning_configuration;
  if (!steps || steps.length === 0) return undefined;
  return steps.filter((step) => step.action === "retry").map((step) => step.delay_in_days);
}

/**
 * Environments are read on every request, so a container keeps them for a short while (`fresh`
 * reads the stored one, consistently: a change starts from it).
 * What is cached is the stored key hash, never a verdict: a wrong key still fails at once.
 */
const CACHE_TTL_MS = 30_000;
const CACHE_MAX_ENTRIES = 1_000;
const cache = new Map<string, { environment: ProjectEnvironment | undefined; until: number }>();

export async function findEnvironment(
  id: string,
  options: { fresh?: boolean } = {},
): Promise<ProjectEnvironment | undefined> {
  const now = Date.now();
  const cached = cache.get(id);
  if (!options.fresh && cached && cached.until > now) return cached.environment;
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.project(id),
      ...(options.fresh ? { ConsistentRead: true } : {}),
    }),
  );
  // A deleted environment is kept (for the records) but is unknown to every request and job.
  const environment = Item && !Item.deleted_at ? (Item as ProjectEnvironment) : undefined;
  if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
  // An unknown id is remembered only briefly, so a project created elsewhere is usable at once.
  cache.set(id, { environment, until: now + (environment ? CACHE_TTL_MS : 1_000) });
  return environment;
}

/**
 * This container changed the environment (its sandbox clock): its next requests see the change at
 * once; other containers within the cache's 30 seconds.
 */
export function rememberEnvironment(environment: ProjectEnvironment): void {
  cache.set(environment.id, { environment, until: Date.now() + CACHE_TTL_MS });
}

/** This container deleted the environment: its next requests find none at once. */
export function forgetEnvironment(id: string): void {
  cache.set(id, { environment: undefined, until: Date.now() + CACHE_TTL_MS });
}

/** The public view of an environment (`GET /projects/{id}`). */
export function presentProject(environment: ProjectEnvironment) {
  return {
    id: environment.id,
    name: environment.name,
    sandbox: environment.sandbox,
    created_at: environment.created_at,
  };
}
