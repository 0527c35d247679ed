/**
 * An environment's routing rules: one versioned document (`GET`/`PUT /routing-rules`), an ordered
 * list whose first matching rule decides where a card payment goes, and the order of the enabled
 * card configurations for payments no rule matches. Replacing it names the version it replaces, so
 * two people editing at once never overwrite each other (409).
 *
 * A rule's conditions all hold for it to match (an absent condition holds for every payment):
 * currencies, an amount range (inclusive, in the payment's currency), card schemes, card types and
 * card countries (from the IIN), countries (the invoice's shipping country, else the customer's),
 * the initiator (`customer`: the shopper's browser or app; `merchant`: the merchant's server or a
 * renewal), and invoice metadata pairs. Its action: `route` through an ordered chain of
 * configurations (the cascade), `split` volume by weights (the rest of the split as the cascade),
 * `block` (refused with the rule's reason), or `require_three_d_s` (the default order, with the
 * cardholder authenticated). `route` and `split` may require 3DS too; each says how many providers
 * one payment may try (`max_attempts`, 1 to 5, default 3).
 */
export const MAX_RULES = 50;
export const MAX_CHAIN = 5;
export const MAX_ATTEMPTS = 5;
export const DEFAULT_MAX_ATTEMPTS = 3;

export type CardTypeCondition = "credit" | "debit" | "prepaid";

export interface RuleConditions {
  currencies?: string[];
  amount_min?: string;
  amount_max?: string;
  card_schemes?: string[];
  card_types?: CardTypeCondition[];
  card_countries?: string[];
  countries?: string[];
  initiator?: "customer" | "merchant";
  metadata?: Record<string, string>;
}

export interface Split {
  gateway_configuration_id: string;
  weight: number;
}

export type RuleAction =
  | { type: "route"; gateway_configuration_ids: string[]; max_attempts: number; require_three_d_s: boolean }
  | { type: "split"; splits: Split[]; max_attempts: number; require_three_d_s: boolean }
  | { type: "block"; reason: string }
  | { type: "require_three_d_s"; max_attempts: number };

export interface RoutingRule {
  id: string;
  name: string | null;
  conditions: RuleConditions;
  action: RuleAction;
}

export interface RoutingRules {
  /** 0 until the environment's rules are first set. */
  version: number;
  /** Card configurations in the order payments no rule matches try them (the others after, oldest first). */
  default_order: string[];
  rules: RoutingRule[];
  updated_at: string | null;
}

export const NO_RULES: RoutingRules = { version: 0, default_order: [], rules: [], updated_at: null };

/** `GET /routing-rules`'s answer. */
export function presentRules(rules: RoutingRules) {
  return { ...rules };
}
