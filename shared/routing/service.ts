import { activityWrite } from "../activities/activity.ts";
import type { Card } from "../cards/card.ts";
import { schemeOfIin } from "../cards/card-number.ts";
import { findCard } from "../cards/store.ts";
import { clock, nowIn } from "../clock.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { forgetConfigurations, readGatewaySetup } from "../gateways/store.ts";
import type { Caller } from "../http/auth.ts";
import { conflict, type InvalidField, invalidField, notFound, validationFailed } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { amountProblemIn, compareAmounts } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import type { RoutingExplanation } from "./decide.ts";
import { decideIn } from "./route.ts";
import { DEFAULT_MAX_ATTEMPTS, type RoutingRule, type RoutingRules } from "./rules.ts";
import { type RulesInput, rulesInput, simulationInput } from "./schema.ts";
import { schemeCheck } from "./scheme-rules.ts";
import { replaceRules, rulesOf } from "./store.ts";

/** `GET /routing-rules`: the environment's rules as stored now. */
export async function getRules(caller: Caller): Promise<RoutingRules> {
  return rulesOf(await readGatewaySetup(caller.projectId));
}

/**
 * `PUT /routing-rules`: replaces the rules, naming the version it replaces (`version`, 0 before
 * the first): another change made since is a 409, and nothing is written. Every configuration a
 * rule or the default order names must be one of the environment's card configurations (deleted
 * ones are refused); each error names its field.
 */
export async function replaceRoutingRules(caller: Caller, input: unknown): Promise<RoutingRules> {
  const fields = parseInput(rulesInput, input);
  const setup = await readGatewaySetup(caller.projectId);
  const current = rulesOf(setup);
  if (fields.version === undefined) {
    throw invalidField("version", `is required: the version these rules replace (now ${current.version})`);
  }
  if (fields.version !== current.version) throw versionConflict(current.version);
  const next: RoutingRules = {
    version: current.version + 1,
    default_order: fields.default_order ?? [],
    rules: checkedRules(fields, setup.configurations),
    updated_at: clock.now().toISOString(),
  };
  const activity = activityWrite(
    caller,
    "routing_rules.replaced",
    `Routing rules replaced (version ${next.version}: ${next.rules.length} rule${next.rules.length === 1 ? "" : "s"})`,
    { type: "routing_rules", id: String(next.version) },
    clock.now(),
  );
  if (!(await replaceRules(caller.projectId, current.version, next, activity))) {
    throw versionConflict((await getRules(caller)).version);
  }
  forgetConfigurations(caller.projectId);
  return next;
}

const versionConflict = (version: number) =>
  conflict(
    "request.routing-rules.version-conflict",
    `The routing rules were changed meanwhile (now version ${version}): read them again and send your change for that version.`,
  );

function checkedRules(fields: RulesInput, configurations: readonly GatewayConfiguration[]): RoutingRule[] {
  const problems: InvalidField[] = [];
  const cardConfiguration = (id: string, field: string): void => {
    const found = configurations.find((configuration) => configuration.id === id);
    if (!found || found.deleted_at !== null)
      problems.push({ name: field, message: `names no gateway configuration of this environment (${id})` });
    else if (found.payment_method !== "card")
      problems.push({ name: field, message: `${id} is not a card configuration` });
  };
  for (const [i, id] of (fields.default_order ?? []).entries()) cardConfiguration(id, `default_order[${i}]`);
  const ids = new Set<string>();
  const rules = fields.rules.map((rule, i): RoutingRule => {
    const at = `rules[${i}]`;
    const id = rule.id ?? newId("routingRule");
    if (ids.has(id))
      problems.push({ name: `${at}.id`, message: `repeats the id of an earlier rule (${id})` });
    ids.add(id);
    const c = rule.conditions;
    if (
      c.amount_min !== undefined &&
      c.amount_max !== undefined &&
      compareAmounts(c.amount_min, c.amount_max) > 0
    ) {
      problems.push({ name: `${at}.conditions.amount_max`, message: "must be at least amount_min" });
    }
    const action = rule.action;
    if (action.type === "route") {
      for (const [j, configurationId] of action.gateway_configuration_ids.entries())
        cardConfiguration(configurationId, `${at}.action.gateway_configuration_ids[${j}]`);
      if (new Set(action.gateway_configuration_ids).size !== action.gateway_configuration_ids.length)
        problems.push({
          name: `${at}.action.gateway_configuration_ids`,
          message: "must not name a configuration twice",
        });
    }
    if (action.type === "split") {
      for (const [j, split] of action.splits.entries())
        cardConfiguration(
          split.gateway_configuration_id,
          `${at}.action.splits[${j}].gateway_configuration_id`,
        );
      if (new Set(action.splits.map((split) => split.gateway_configuration_id)).size !== action.splits.length)
        problems.push({ name: `${at}.action.splits`, message: "must not name a configuration twice" });
    }
    const conditions = Object.fromEntries(
      Object.entries(c).filter(
        ([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0),
      ),
    );
    return {
      id,
      name: rule.name ?? null,
      conditions,
      action:
        action.type === "block"
          ? action
          : action.type === "require_three_d_s"
            ? { type: action.type, max_attempts: action.max_attempts ?? DEFAULT_MAX_ATTEMPTS }
            : {
                ...action,
                max_attempts: action.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
                require_three_d_s: action.require_three_d_s ?? false,
              },
    } as RoutingRule;
  });
  if (problems.length > 0) throw validationFailed("invalid-routing-rules", problems);
  return rules;
}

/**
 * `POST /routing-rules/simulate`: the routing explanation a payment would get now (rules, breakers,
 * the card's scheme retry rules), without reserving anything or moving money. The card is a stored
 * card (`card_id`) or only its first digits (`iin`).
 */
export async function simulateRouting(caller: Caller, input: unknown): Promise<RoutingExplanation> {
  const fields = parseInput(simulationInput, input);
  const problem = amountProblemIn(fields.amount, fields.currency);
  if (problem) throw invalidField("amount", problem);
  let card: Pick<Card, "scheme" | "iin" | "declined_at" | "merchant_advice_block"> | undefined;
  if (fields.card_id) {
    const found = isId("card", fields.card_id) ? await findCard(caller.projectId, fields.card_id) : undefined;
    if (!found) throw notFound("card", fields.card_id);
    card = found.card;
  } else if (fields.iin) {
    card = { scheme: schemeOfIin(fields.iin), iin: fields.iin.slice(0, 6) };
  } else throw invalidField("card_id", "is required, or iin", "missing-card");
  const setup = await readGatewaySetup(caller.projectId);
  const pinned = fields.gateway_configuration_id?.split(".")[0] ?? null;
  if (
    pinned &&
    !setup.configurations.some(
      (configuration) => configuration.id === pinned && configuration.deleted_at === null,
    )
  ) {
    throw notFound("gateway-configuration", fields.gateway_configuration_id);
  }
  const explanation = await decideIn(
    setup,
    {
      transactionId: newId("transaction"),
      amount: fields.amount,
      currency: fields.currency,
      card: { scheme: card.scheme, iin: card.iin },
      country: fields.country ?? null,
      initiator: fields.initiator ?? "customer",
      metadata: fields.metadata ?? {},
    },
    pinned,
  );
  const check = schemeCheck(card, { overrideMacBlocking: false, declinedNow: [] }, nowIn(caller.environment));
  explanation.scheme_rules.push(...check.notes);
  return explanation;
}
