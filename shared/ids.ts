import { monotonicFactory } from "ulid";

/** Every resource id is a type prefix plus a ULID: unique, and sortable by creation time. */
export const ID_PREFIXES = {
  project: "proj_",
  customer: "cust_",
  token: "tok_",
  card: "card_",
  invoice: "iv_",
  invoiceDetail: "ivd_",
  transaction: "tr_",
  refund: "ref_",
  /** An operation of a transaction (authorization, capture, …): also its reference with the provider. */
  operation: "op_",
  event: "ev_",
  /** A webhook: one delivery attempt of an event to one URL (`GET /events/{id}/webhooks`). */
  webhook: "wh_",
  /** A request to deliver an event again (`POST /events/{id}/webhooks`). */
  webhookResend: "whr_",
  subscription: "sub_",
  /** An add-on of a subscription: billed with each renewal. */
  addon: "addon_",
  /** A discount of a subscription, from a coupon or ad hoc. */
  discount: "disc_",
  gatewayConfiguration: "gway_conf_",
  /** A routing rule the merchant gave no id of its own. */
  routingRule: "rule_",
  /** An entry of an environment's activity log (`shared/activities`). */
  activity: "act_",
  /** An Apple Pay merchant certificate whose key pair we hold (`shared/applepay`). */
  applepayCertificate: "apc_",
  /** A provider's payout to the merchant; the sandbox gateway's are derived (`shared/payouts/ids.ts`). */
  payout: "po_",
  payoutItem: "poi_",
  /** An export layout (`shared/exports`): columns, time and amount formats of an export type. */
  exportLayout: "exp_lay_",
  /** An export: a CSV file of an environment's transactions, payouts or payout items. */
  export: "exp_",
  /** A product: a reusable priced payment link (`shared/products`). */
  product: "prod_",
  /** One of an environment's private keys (`shared/projects/api-keys.ts`). */
  apiKey: "apik_",
  /** A person who signs in to the dashboard (`shared/dashboard/users.ts`). */
  dashboardUser: "user_",
  /** A dashboard session (its public id; the cookie holds a secret, `shared/dashboard/sessions.ts`). */
  dashboardSession: "dses_",
  /** An invitation to a project's dashboard, or a one-time sign-in link (`shared/dashboard/links.ts`). */
  invitation: "inv_",
  /** An entry of a project's dashboard audit log (`shared/dashboard/audit.ts`). */
  auditEntry: "aud_",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** Sandbox environments of a project are addressed by the project id with this prefix. */
export const SANDBOX_PROJECT_PREFIX = "test-";

const ulid = monotonicFactory();
export const ULID_PATTERN = "[0-9A-HJKMNP-TV-Z]{26}";

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}${ulid()}`;
}

/**
 * The id of kind `kind` that shares the ULID of `id`. An invoice has at most one transaction, and
 * its id is the invoice's ULID with the transaction prefix: a payment reads the invoice and its
 * transaction together, in one round trip, instead of the one after the other.
 */
export function sharedUlidId(kind: IdKind, id: string): string {
  return `${ID_PREFIXES[kind]}${id.slice(id.length - 26)}`;
}

const patterns = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}${ULID_PATTERN}$`)]),
) as Record<IdKind, RegExp>;

export function isId(kind: IdKind, value: string): boolean {
  return patterns[kind].test(value);
}

/** The anchored pattern of an id of `kind`: what `isId` checks. */
export function idPattern(kind: IdKind): RegExp {
  return patterns[kind];
}

/**
 * The id of one environment of a project: `proj_…` (live) or `test-proj_…` (sandbox). The root
 * project id and the sandbox one share their ULID.
 */
export const ENVIRONMENT_PROJECT_ID_PATTERN = new RegExp(
  `^(${SANDBOX_PROJECT_PREFIX})?${ID_PREFIXES.project}${ULID_PATTERN}$`,
);

/** The environment project id (`proj_…` or `test-proj_…`) both ids of one project share a ULID with. */
export function environmentProjectId(rootProjectId: string, sandbox: boolean): string {
  return sandbox ? `${SANDBOX_PROJECT_PREFIX}${rootProjectId}` : rootProjectId;
}

/** Whether an environment project id (the scope of its data) is a sandbox environment's. */
export function isSandboxProjectId(environmentProjectId: string): boolean {
  return environmentProjectId.startsWith(SANDBOX_PROJECT_PREFIX);
}

export function isEnvironmentProjectId(value: string): boolean {
  return ENVIRONMENT_PROJECT_ID_PATTERN.test(value);
}

/**
 * The ids merchants choose (plans, coupons): 1 to 100 letters, digits, `_`, `-` and `.` (what may
 * follow in a URL path as is). A new one may not be `.` or `..` either (`chosenId` in
 * `validation/fields.ts`): a URL path cannot address them.
 */
export const PLAN_ID_PATTERN = /^[A-Za-z0-9_.-]{1,100}$/;
/** A coupon's id (its code) follows the plans' rules. */
export const COUPON_ID_PATTERN = PLAN_ID_PATTERN;
