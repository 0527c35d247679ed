import { createHash } from "node:crypto";
import { iinDetails } from "../cards/iin-table.ts";
import type { GatewayConfiguration } from "../gateways/configuration.ts";
import { compareAmounts } from "../money.ts";
import type { Health } from "./health.ts";
import { DEFAULT_MAX_ATTEMPTS, type RoutingRule, type RoutingRules, type Split } from "./rules.ts";

/**
 * Where a card payment goes, and why: the pure decision routing takes from the environment's rules,
 * its card configurations and their breakers. The explanation is kept on the transaction
 * (`routing`) and answered by `POST /routing-rules/simulate` for a hypothetical payment.
 */
export interface PaymentFacts {
  /** Splits by weight are drawn from it: the same payment always draws the same configuration. */
  transactionId: string;
  amount: string;
  currency: string;
  card: { scheme: string | null; iin: string };
  /** The invoice's shipping country, else its customer's; null when neither is known. */
  country: string | null;
  initiator: "customer" | "merchant";
  metadata: Readonly<Record<string, string>>;
}

export type SkipReason =
  | "unknown"
  | "deleted"
  | "disabled"
  | "not-for-cards"
  | "currency-not-supported"
  | "circuit-open"
  | "circuit-half-open-probe-in-flight";

export interface Skipped {
  gateway_configuration_id: string;
  reason: SkipReason;
}

export interface RoutingExplanation {
  /** `pinned`: the request named its configuration; `rule`: a rule matched; `default`: none did. */
  decided_by: "pinned" | "rule" | "default";
  rule: { id: string; name: string | null; position: number } | null;
  rules_version: number;
  /** The payment as routing saw it. */
  facts: {
    card_scheme: string | null;
    card_type: string | null;
    card_country: string | null;
    country: string | null;
    initiator: "customer" | "merchant";
  };
  /** A split's weights and the configuration this payment drew. */
  split: { weights: Split[]; drawn: string | null } | null;
  /** The configurations the payment may try, in order (the cascade). */
  chain: string[];
  /** Those of the rule's chain (or the default order) it will not try, and why. */
  skipped: Skipped[];
  /** Half-open breakers in the chain: tried only as their one probe. */
  probing: string[];
  max_attempts: number;
  require_three_d_s: boolean;
  /** The blocking rule's reason: the payment is refused. */
  blocked: string | null;
  /** What the card schemes' retry rules said (filled in by the payment). */
  scheme_rules: string[];
}

/** Whether a payment meets every condition of a rule. */
export function matches(rule: RoutingRule, facts: PaymentFacts): boolean {
  const c = rule.conditions;
  const details = iinDetails(facts.card.iin);
  const inList = (list: readonly string[] | undefined, value: string | null | undefined) =>
    list === undefined || list.length === 0 || (value != null && list.includes(value));
  if (!inList(c.currencies, facts.currency)) return false;
  if (c.amount_min !== undefined && compareAmounts(facts.amount, c.amount_min) < 0) return false;
  if (c.amount_max !== undefined && compareAmounts(facts.amount, c.amount_max) > 0) return false;
  if (!inList(c.card_schemes, facts.card.scheme)) return false;
  if (!inList(c.card_types, details?.type)) return false;
  if (!inList(c.card_countries, details?.country)) return false;
  if (!inList(c.countries, facts.country)) return false;
  if (c.initiator !== undefined && c.initiator !== facts.initiator) return false;
  for (const [key, value] of Object.entries(c.metadata ?? {})) {
    if (facts.metadata[key] !== value) return false;
  }
  return true;
}

/** Whether any rule needs the payment's country (which may cost a read of the customer). */
export function needsCountry(rules: RoutingRules): boolean {
  return rules.rules.some((rule) => (rule.conditions.countries?.length ?? 0) > 0);
}

/** The enabled card configurations in the merchant's default order, then the others oldest first. */
function defaultOrder(rules: RoutingRules, configurations: readonly GatewayConfiguration[]): string[] {
  const cards = configurations
    .filter((configuration) => configuration.payment_method === "card" && configuration.deleted_at === null)
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((configuration) => configuration.id);
  const ordered = rules.default_order.filter((id) => cards.includes(id));
  return [...ordered, ...cards.filter((id) => !ordered.includes(id))];
}

/** A number in [0, 1) drawn from the payment's id: the same payment draws the same share. */
export function draw(transactionId: string): number {
  return createHash("sha256").update(transactionId).digest().readUInt32BE(0) / 2 ** 32;
}

/** The split's order for this payment: one configuration drawn by weight, then the others by weight. */
function splitOrder(splits: readonly Split[], at: number): { order: string[]; drawn: string | null } {
  const total = splits.reduce((sum, split) => sum + split.weight, 0);
  let threshold = at * total;
  let drawn: Split | undefined;
  for (const split of splits) {
    if (threshold < split.weight) {
      drawn = split;
      break;
    }
    threshold -= split.weight;
  }
  const rest = splits.filter((split) => split !== drawn).sort((a, b) => b.weight - a.weight);
  return {
    order: [...(drawn ? [drawn] : []), ...rest].map((split) => split.gateway_configuration_id),
    drawn: drawn?.gateway_configuration_id ?? null,
  };
}

/** Why a configuration cannot take this payment now; undefined when it can. */
function skipReason(
  configuration: GatewayConfiguration | undefined,
  facts: PaymentFacts,
  health: Health | undefined,
  now: number,
): SkipReason | undefined {
  if (!configuration) return "unknown";
  if (configuration.deleted_at !== null) return "deleted";
  if (!configuration.enabled) return "disabled";
  if (configuration.payment_method !== "card") return "not-for-cards";
  if (configuration.currencies && !configuration.currencies.includes(facts.currency))
    return "currency-not-supported";
  if (health?.state === "open") return "circuit-open";
  if (health?.state === "half-open" && health.probeUntil > now) return "circuit-half-open-probe-in-flight";
  return undefined;
}

/**
 * Decides a payment's route: the pinned configuration; else the first rule that matches; else the
 * default order. The chain keeps the configurations that can take the payment now, in order, and
 * the explanation names each one left out and why. Half-open breakers stay in the chain, named in
 * `probing`: the payment claims their probe before trying them.
 */
export function decide(
  rules: RoutingRules,
  configurations: readonly GatewayConfiguration[],
  health: ReadonlyMap<string, Health>,
  facts: PaymentFacts,
  options: { pinned: string | null; now: number },
): RoutingExplanation {
  const details = iinDetails(facts.card.iin);
  const explanation: RoutingExplanation = {
    decided_by: "default",
    rule: null,
    rules_version: rules.version,
    facts: {
      card_scheme: facts.card.scheme,
      card_type: details?.type ?? null,
      card_country: details?.country ?? null,
      country: facts.country,
      initiator: facts.initiator,
    },
    split: null,
    chain: [],
    skipped: [],
    probing: [],
    max_attempts: DEFAULT_MAX_ATTEMPTS,
    require_three_d_s: false,
    blocked: null,
    scheme_rules: [],
  };
  const byId = new Map(configurations.map((configuration) => [configuration.id, configuration]));
  let candidates: string[];
  if (options.pinned !== null) {
    // The merchant chose: tried whatever its breaker says, and alone.
    return { ...explanation, decided_by: "pinned", chain: [options.pinned], max_attempts: 1 };
  }
  const position = rules.rules.findIndex((rule) => matches(rule, facts));
  const rule = rules.rules[position];
  if (!rule) candidates = defaultOrder(rules, configurations);
  else {
    explanation.decided_by = "rule";
    explanation.rule = { id: rule.id, name: rule.name, position: position + 1 };
    const action = rule.action;
    if (action.type === "block") return { ...explanation, blocked: action.reason, max_attempts: 0 };
    explanation.max_attempts = action.max_attempts;
    explanation.require_three_d_s = action.type === "require_three_d_s" || action.require_three_d_s;
    if (action.type === "route") candidates = action.gateway_configuration_ids;
    else if (action.type === "split") {
      // Drawn among the configurations that can take the payment now, by their weights.
      const usable = action.splits.filter(
        (split) =>
          !skipReason(
            byId.get(split.gateway_configuration_id),
            facts,
            health.get(split.gateway_configuration_id),
            options.now,
          ),
      );
      const { order, drawn } = splitOrder(usable, draw(facts.transactionId));
      explanation.split = { weights: action.splits, drawn };
      candidates = [
        ...order,
        ...action.splits.map((split) => split.gateway_configuration_id).filter((id) => !order.includes(id)),
      ];
    } else candidates = defaultOrder(rules, configurations);
  }
  for (const id of candidates) {
    const found = health.get(id);
    const reason = skipReason(byId.get(id), facts, found, options.now);
    if (reason) explanation.skipped.push({ gateway_configuration_id: id, reason });
    else {
      explanation.chain.push(id);
      if (found?.state === "half-open") explanation.probing.push(id);
    }
  }
  // 3DS needs the cardholder: a merchant-initiated payment cannot authenticate.
  if (facts.initiator === "merchant" && explanation.require_three_d_s) {
    explanation.require_three_d_s = false;
    explanation.scheme_rules.push("3DS required by the rule does not apply to a merchant-initiated payment");
  }
  return explanation;
}
