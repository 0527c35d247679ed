/**
 * What each resource the API presents can expand: the one table of expandable fields, read by the
 * expander (`expander.ts`), by the HTTP core's check of `expand`, and by the OpenAPI document.
 * Data only: it imports no domain, so anything may read it.
 *
 * A field expands to one resource, found by the presented resource's `<field>_id` (`customer` by
 * `customer_id`), or to a list of them (a customer's `tokens`). Paths nest with dots up to
 * `MAX_DEPTH` fields (`customer.tokens`, `transaction.card`): each field of the path expands what
 * the one before it expanded.
 */
export type ResourceType =
  | "customer"
  | "invoice"
  | "transaction"
  | "token"
  | "subscription"
  | "plan"
  | "card"
  | "project";

export interface ExpandableField {
  type: ResourceType;
  /** A list (the customer's tokens), or one resource found by `<field>_id`. */
  list: boolean;
  /** The presenter shows it expanded anyway (a token's `card`): asking for it reads nothing. */
  alwaysShown?: boolean;
}

const one = (type: ResourceType, options: { alwaysShown?: boolean } = {}): ExpandableField => ({
  type,
  list: false,
  ...options,
});
const list = (type: ResourceType): ExpandableField => ({ type, list: true });

export const EXPANDABLE: Readonly<Record<ResourceType, Readonly<Record<string, ExpandableField>>>> = {
  customer: {
    project: one("project"),
    tokens: list("token"),
    subscriptions: list("subscription"),
    transactions: list("transaction"),
  },
  invoice: {
    project: one("project"),
    customer: one("customer"),
    transaction: one("transaction"),
    token: one("token"),
  },
  transaction: {
    project: one("project"),
    invoice: one("invoice"),
    customer: one("customer"),
    token: one("token"),
    card: one("card"),
  },
  token: { customer: one("customer"), card: one("card", { alwaysShown: true }) },
  subscription: { customer: one("customer"), plan: one("plan"), token: one("token") },
  plan: {},
  card: {},
  project: {},
};

/** Fields a path may chain: `customer.tokens` is 2. */
export const MAX_DEPTH = 2;

/** Every path `type` can expand, shortest first: `customer`, …, `customer.tokens`, …. */
export function expandablePaths(type: ResourceType, depth = MAX_DEPTH): string[] {
  if (depth === 0) return [];
  const fields = Object.entries(EXPANDABLE[type]);
  return [
    ...fields.map(([name]) => name),
    ...fields.flatMap(([name, field]) =>
      expandablePaths(field.type, depth - 1).map((nested) => `${name}.${nested}`),
    ),
  ];
}

/** Paths as a tree: `customer`, `customer.tokens`, `token` → {customer: {tokens: {}}, token: {}}. */
export interface ExpandTree {
  [field: string]: ExpandTree;
}

export function expandTree(paths: Iterable<string>): ExpandTree {
  const tree: ExpandTree = {};
  for (const path of paths) {
    let node = tree;
    for (const field of path.split(".")) {
      node[field] ??= {};
      node = node[field] as ExpandTree;
    }
  }
  return tree;
}

/**
 * What an answer presents, by the key it presents it under: `{customer: "customer"}` for
 * `{customer: {...}}`, `{customers: "customer"}` for a list's page (each item expands).
 */
export type AnswerResources = Readonly<Record<string, ResourceType>>;
