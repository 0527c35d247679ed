import { activityWrite } from "../activities/activity.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { countChange } from "../db/counters.ts";
import { keys } from "../db/keys.ts";
import { type PageRequest, queryPage } from "../db/listing.ts";
import { type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField } from "../http/errors.ts";
import { newId } from "../ids.ts";
import { currency, dictionary, metadata, requiredText } from "../validation/fields.ts";
import { parseInput } from "../validation/parse.ts";
import * as z from "../validation/zod.ts";
import type { DunningStep, ProjectEnvironment } from "./environment.ts";
import { type EnvironmentSettings, MAX_NAME_LENGTH, newEnvironment } from "./project.ts";

/**
 * Supervised projects: a platform (the supervisor) creates its sub-merchants' projects, each with
 * its own keys, and lists them. The supervisor's keys open none of a child's data: every request is
 * authenticated as one environment, with that environment's own key.
 *
 * A child mirrors the environment that created it: a sandbox supervisor makes a sandbox-only child
 * (a test sub-merchant; sandbox credentials never reach live), a live supervisor makes a project with
 * both environments, and is answered both keys (each shown once, never stored: only their hashes).
 * The supervisor keeps a record of each child in its own environment (`supervised_project`), listed
 * and counted, written in the same transaction as the child itself.
 */
const ENTITY = "supervised_project";

export const MAX_DUNNING_STEPS = 10;
export const MAX_DUNNING_DELAY_DAYS = 90;

const dunningStep = z.object({
  action: z.enum(["retry", "cancel"], "must be retry or cancel"),
  delay_in_days: z.optional(
    z.preprocess(
      (value) => (typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value),
      z
        .number("must be a number of days")
        .check(
          z.int("must be a whole number of days"),
          z.minimum(0, "cannot be negative"),
          z.maximum(MAX_DUNNING_DELAY_DAYS, `must be at most ${MAX_DUNNING_DELAY_DAYS}`),
        ),
    ),
  ),
});

export const supervisedProjectInput = z.object({
  /** Project ids are the service's: a client sends `id` as null. */
  id: z.optional(z.unknown()),
  name: requiredText(MAX_NAME_LENGTH),
  default_currency: z.optional(currency),
  dunning_configuration: z.optional(
    z
      .array(dunningStep, "must be a list of steps")
      .check(z.maxLength(MAX_DUNNING_STEPS, `must hold at most ${MAX_DUNNING_STEPS} steps`)),
  ),
  applepay_settings: dictionary({ pairs: 10, keyLength: 40, valueLength: 255 }),
  public_metadata: metadata,
});

/** The steps as a dunning runs them: retries at increasing delays, then at most one cancel, last. */
function checkedDunning(steps: z.output<typeof dunningStep>[] | undefined): DunningStep[] | null {
  if (steps === undefined || steps.length === 0) return null;
  let previous = -1;
  return steps.map((step, index) => {
    const field = `dunning_configuration[${index}]`;
    if (step.action === "cancel") {
      if (index !== steps.length - 1)
        throw invalidField(`${field}.action`, "cancel can only be the last step");
      return { action: "cancel", delay_in_days: step.delay_in_days ?? 0 };
    }
    if (step.delay_in_days === undefined)
      throw invalidField(`${field}.delay_in_days`, "is required for a retry");
    if (step.delay_in_days <= previous) {
      throw invalidField(`${field}.delay_in_days`, "must be later than the previous retry's");
    }
    previous = step.delay_in_days;
    return { action: "retry", delay_in_days: step.delay_in_days };
  });
}

/** A project as the API shows it (the clients' Project); `private_key` only in a creation's answer. */
export function presentSupervisedProject(environment: ProjectEnvironment, privateKey: string | null = null) {
  return {
    id: environment.id,
    supervisor_project_id: environment.supervisor_project_id ?? null,
    api_version: null,
    name: environment.name,
    logo_url: null,
    email: null,
    default_currency: environment.default_currency ?? null,
    private_key: privateKey,
    dunning_configuration: environment.dunning_configuration ?? null,
    applepay_settings: environment.applepay_settings ?? null,
    public_metadata: environment.public_metadata ?? {},
    sandbox: environment.sandbox,
    created_at: environment.created_at,
  };
}

/** `POST /supervised-projects` */
export async function createSupervisedProject(
  caller: Caller,
  input: unknown,
  commitWith: (stored: Record<string, unknown>) => TransactItem[] = () => [],
) {
  const fields = parseInput(supervisedProjectInput, input);
  if (fields.id !== undefined && fields.id !== "") {
    throw invalidField("id", "is chosen by the service: send it as null");
  }
  const now = clock.now();
  const rootId = newId("project");
  const settings = (supervisor: string): EnvironmentSettings => ({
    supervisor_project_id: supervisor,
    default_currency: fields.default_currency ?? null,
    dunning_configuration: checkedDunning(fields.dunning_configuration),
    applepay_settings: fields.applepay_settings ?? null,
    public_metadata: fields.public_metadata ?? {},
  });
  const child = newEnvironment(rootId, caller.sandbox, fields.name, now, settings(caller.projectId));
  // A live supervisor's child gets its sandbox too, supervised by the supervisor's own sandbox.
  const sandboxChild = caller.sandbox
    ? undefined
    : newEnvironment(rootId, true, fields.name, now, settings(`test-${caller.environment.root_project_id}`));
  const answer = (shown: boolean) => ({
    ...presentSupervisedProject(child.environment, shown ? child.privateKey : null),
    ...(sandboxChild
      ? {
          sandbox_project: presentSupervisedProject(
            sandboxChild.environment,
            shown ? sandboxChild.privateKey : null,
          ),
        }
      : {}),
  });
  await transactWrite([
    ...child.writes,
    ...(sandboxChild?.writes ?? []),
    {
      Put: {
        TableName: config.tableName,
        Item: {
          ...keys.resource(caller.projectId, child.environment.id),
          ...keys.listing(caller.projectId, ENTITY, child.environment.id),
          type: ENTITY,
          ...presentSupervisedProject(child.environment),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    countChange(caller.projectId, ENTITY, 1),
    ...activityWrite(
      caller,
      "supervised_project.created",
      `Supervised project "${fields.name}" created (${child.environment.id})`,
      { type: "project", id: child.environment.id },
      now,
    ),
    // The answer kept for an Idempotency-Key never holds the keys: they are shown once.
    ...commitWith(answer(false)),
  ]);
  return answer(true);
}

/** `GET /supervised-projects`: the projects this environment created, newest first (never their keys). */
export async function pageOfSupervisedProjects(caller: Caller, page: PageRequest) {
  const result = await queryPage(caller.projectId, ENTITY, page);
  return {
    ...result,
    items: result.items.map(({ pk, sk, gsi1pk, gsi1sk, type, ...project }) => project),
  };
}
