/**
 * Who may do what through the dashboard: every route of `lib/topology.ts` (the API's and the
 * dashboard's own), by its API Gateway route key (`event.routeKey`), in one class of action, and
 * which roles may take each class. A session-authenticated request to a route its role may not call
 * is refused 403 `request.dashboard.forbidden` before any work; API keys are not concerned (a private
 * key does everything in its environment). A unit test holds every route of the topology to an
 * entry here, so a new route cannot be forgotten.
 */
export const ROLES = ["owner", "developer", "support", "read-only"] as const;
export type Role = (typeof ROLES)[number];

/**
 * - `public`: takes no session (documentation, checkout and payment pages, providers' webhooks, the
 *   sign-in steps themselves);
 * - `self`: any signed-in person, about their own session and factors;
 * - `read`: reading (every GET, and the POSTs that only search);
 * - `support`: refunds, voids, captures, a subscription's cancel and trial end (`PUT`), webhook resend;
 * - `developer`: API keys, webhook URL and project settings, gateway configurations, routing rules
 *   and their simulation, the sandbox clock;
 * - `owner`: everything else (creating customers, invoices, plans, …), people, invitations, the audit log.
 */
export const ACTION_CLASSES = ["public", "self", "read", "support", "developer", "owner"] as const;
export type ActionClass = (typeof ACTION_CLASSES)[number];

const ALLOWED: Readonly<Record<Role, ReadonlySet<ActionClass>>> = {
  owner: new Set(["self", "read", "support", "developer", "owner"]),
  developer: new Set(["self", "read", "developer"]),
  support: new Set(["self", "read", "support"]),
  "read-only": new Set(["self", "read"]),
};

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** The class of the route `routeKey` (`POST /invoices/{invoice_id}/refunds`); undefined when unknown. */
export function actionOf(routeKey: string): ActionClass | undefined {
  return Object.hasOwn(ROUTE_ACTIONS, routeKey) ? ROUTE_ACTIONS[routeKey] : undefined;
}

/** Whether `role` may call `routeKey`; an unclassified route is nobody's. */
export function mayCall(role: Role, routeKey: string): boolean {
  const action = actionOf(routeKey);
  return action !== undefined && (action === "public" || ALLOWED[role].has(action));
}

/**
 * Routes a role may call for some of their fields only: a support person's `PUT
 * /subscriptions/{id}` moves or withdraws the cancellation, or ends or moves the trial, and changes
 * no plan, amount, payment source or coupon (an owner's changes).
 */
const FIELD_LIMITS: Readonly<Record<string, Partial<Record<Role, readonly string[]>>>> = {
  "PUT /subscriptions/{subscription_id}": { support: ["cancel_at", "cancellation_reason", "trial_end_at"] },
};

/** The fields of `body` that `role` may not send to `routeKey` (those given a value). */
export function fieldsRefused(
  role: Role,
  routeKey: string,
  body: Readonly<Record<string, unknown>>,
): string[] {
  const allowed = Object.hasOwn(FIELD_LIMITS, routeKey) ? FIELD_LIMITS[routeKey]?.[role] : undefined;
  if (!allowed) return [];
  return Object.entries(body)
    .filter(([name, value]) => value !== undefined && value !== null && !allowed.includes(name))
    .map(([name]) => name);
}

/** POSTs that change nothing (a search, a simulation): they are not audited. */
export const CHANGES_NOTHING: ReadonlySet<string> = new Set([
  "POST /transactions",
  "POST /routing-rules/simulate",
  "POST /dashboard/passkeys/options",
  "POST /dashboard/sign-in/passkey/options",
]);

export const ROUTE_ACTIONS: Readonly<Record<string, ActionClass>> = {
  "POST /customers": "owner",
  "GET /customers": "read",
  "GET /customers/{customer_id}": "read",
  "PUT /customers/{customer_id}": "owner",
  "DELETE /customers/{customer_id}": "owner",
  "POST /invoices": "owner",
  "GET /invoices": "read",
  "GET /invoices/{invoice_id}": "read",
  "PUT /invoices/{invoice_id}": "owner",
  "DELETE /invoices/{invoice_id}": "owner",
  "POST /cards": "owner",
  "GET /cards": "read",
  "GET /cards/{card_id}": "read",
  "PUT /cards/{card_id}": "owner",
  "DELETE /cards/{card_id}": "owner",
  "GET /iins/{iin}": "read",
  "POST /customers/{customer_id}/tokens": "owner",
  "GET /customers/{customer_id}/tokens": "read",
  "GET /balances/tokens/{token_id}": "read",
  "GET /customers/{customer_id}/tokens/{token_id}": "read",
  "PUT /customers/{customer_id}/tokens/{token_id}": "owner",
  "DELETE /customers/{customer_id}/tokens/{token_id}": "owner",
  "POST /invoices/{invoice_id}/authorize": "owner",
  "POST /invoices/{invoice_id}/capture": "support",
  "POST /invoices/{invoice_id}/increment_authorization": "owner",
  "POST /invoices/{invoice_id}/void": "support",
  "POST /invoices/{invoice_id}/three-d-s": "owner",
  "POST /invoices/{invoice_id}/authenticate": "owner",
  "POST /invoices/{invoice_id}/payout": "owner",
  "POST /invoices/{invoice_id}/refunds": "support",
  "GET /invoices/{invoice_id}/transactions": "read",
  "GET /invoices/{invoice_id}/customers": "read",
  "POST /invoices/{invoice_id}/customers": "owner",
  "POST /invoices/{invoice_id}/native-payment": "owner",
  "GET /invoices/{invoice_id}/native-payment/{gateway_configuration_id}": "read",
  "PUT /invoices/{invoice_id}/sync-with-psp": "owner",
  "GET /transactions": "read",
  "POST /transactions": "read",
  "GET /transactions/{transaction_id}": "read",
  "POST /transactions/{transaction_id}/refunds": "support",
  "GET /transactions/{transaction_id}/refunds": "read",
  "GET /transactions/{transaction_id}/refunds/{refund_id}": "read",
  "GET /3ds/{token}": "public",
  "POST /3ds/{token}": "public",
  "GET /3ds/{token}/fingerprint": "public",
  "GET /3ds/{token}/return": "public",
  "POST /gateway-webhooks/{gateway_configuration_id}": "public",
  "GET /error-codes": "read",
  "GET /activities": "read",
  "GET /activities/{activity_id}": "read",
  "GET /events": "read",
  "GET /events/{event_id}": "read",
  "GET /events/{event_id}/webhooks": "read",
  "POST /events/{event_id}/webhooks": "support",
  "POST /plans": "owner",
  "GET /plans": "read",
  "GET /plans/{plan_id}": "read",
  "PUT /plans/{plan_id}": "owner",
  "DELETE /plans/{plan_id}": "owner",
  "POST /coupons": "owner",
  "GET /coupons": "read",
  "GET /coupons/{coupon_id}": "read",
  "PUT /coupons/{coupon_id}": "owner",
  "DELETE /coupons/{coupon_id}": "owner",
  "POST /subscriptions": "owner",
  "GET /subscriptions": "read",
  "GET /subscriptions/{subscription_id}": "read",
  "PUT /subscriptions/{subscription_id}": "support",
  "DELETE /subscriptions/{subscription_id}": "support",
  "GET /subscriptions/{subscription_id}/addons": "read",
  "POST /subscriptions/{subscription_id}/addons": "owner",
  "GET /subscriptions/{subscription_id}/addons/{addon_id}": "read",
  "PUT /subscriptions/{subscription_id}/addons/{addon_id}": "owner",
  "DELETE /subscriptions/{subscription_id}/addons/{addon_id}": "owner",
  "GET /subscriptions/{subscription_id}/discounts": "read",
  "POST /subscriptions/{subscription_id}/discounts": "owner",
  "GET /subscriptions/{subscription_id}/discounts/{discount_id}": "read",
  "DELETE /subscriptions/{subscription_id}/discounts/{discount_id}": "owner",
  "GET /subscriptions/{subscription_id}/customers": "read",
  "GET /subscriptions/{subscription_id}/transactions": "read",
  "GET /customers/{customer_id}/subscriptions": "read",
  "GET /customers/{customer_id}/transactions": "read",
  "GET /sandbox/clock": "read",
  "POST /sandbox/clock": "developer",
  "GET /gateway-configurations": "read",
  "GET /gateway-configurations/{gateway_configuration_id}": "read",
  "PUT /gateway-configurations/{gateway_configuration_id}": "developer",
  "DELETE /gateway-configurations/{gateway_configuration_id}": "developer",
  "POST /gateways/{gateway_name}/gateway-configurations": "developer",
  "GET /gateways/{gateway_name}/gateway-configurations": "read",
  "GET /routing-rules": "read",
  "PUT /routing-rules": "developer",
  "POST /routing-rules/simulate": "developer",
  "POST /products": "owner",
  "GET /products": "read",
  "GET /products/{product_id}": "read",
  "PUT /products/{product_id}": "owner",
  "DELETE /products/{product_id}": "owner",
  "POST /products/{product_id}/invoices": "owner",
  "GET /pay/{project_id}/{product_id}": "public",
  "POST /pay/{project_id}/{product_id}": "public",
  "GET /payouts": "read",
  "GET /payouts/{payout_id}": "read",
  "DELETE /payouts/{payout_id}": "owner",
  "GET /payouts/{payout_id}/items": "read",
  "GET /exports/layouts": "read",
  "POST /exports/layouts": "owner",
  "GET /exports/layouts/default/{export_type}": "read",
  "GET /exports/layouts/options/{export_type}": "read",
  "GET /exports/layouts/{export_layout_id}": "read",
  "PUT /exports/layouts/{export_layout_id}": "owner",
  "DELETE /exports/layouts/{export_layout_id}": "owner",
  "POST /exports": "owner",
  "GET /exports": "read",
  "GET /exports/{export_id}": "read",
  "GET /projects/{project_id}/sftp-settings": "read",
  "PUT /projects/{project_id}/sftp-settings": "developer",
  "DELETE /projects/{project_id}/sftp-settings": "developer",
  "GET /projects/{project_id}": "read",
  "PUT /projects/{project_id}": "developer",
  "DELETE /projects/{project_id}": "owner",
  "GET /api-keys": "read",
  "POST /api-keys": "developer",
  "POST /api-keys/{api_key_id}/roll": "developer",
  "DELETE /api-keys/{api_key_id}": "developer",
  "POST /supervised-projects": "owner",
  "GET /supervised-projects": "read",
  "GET /projects/applepay/alternative-merchant-certificates": "read",
  "POST /projects/applepay/alternative-merchant-certificates": "owner",
  "GET /projects/applepay/alternative-merchant-certificates/{certificate_id}": "read",
  "PUT /projects/applepay/alternative-merchant-certificates/{certificate_id}": "owner",
  "DELETE /projects/applepay/alternative-merchant-certificates/{certificate_id}": "owner",
  "GET /openapi.json": "public",
  "GET /docs": "public",
  "GET /docs/{docs_file}": "public",
  "GET /checkout/{project_id}/{invoice_id}": "public",
  "GET /assets/{asset}": "public",
  "GET /dashboard": "public",
  "GET /statistics": "read",
  "GET /search": "read",
  // The dashboard's own routes (functions/dashboard).
  "POST /dashboard/sign-in": "public",
  "POST /dashboard/sign-in/totp": "public",
  "POST /dashboard/sign-in/passkey/options": "public",
  "POST /dashboard/sign-in/passkey": "public",
  "POST /dashboard/accept": "public",
  "GET /dashboard/session": "self",
  "POST /dashboard/sign-out": "self",
  "POST /dashboard/sign-out-everywhere": "self",
  "POST /dashboard/totp": "self",
  "POST /dashboard/totp/confirm": "self",
  "POST /dashboard/passkeys/options": "self",
  "POST /dashboard/passkeys": "self",
  "GET /dashboard/users": "owner",
  "POST /dashboard/invitations": "owner",
  "PUT /dashboard/users/{user_id}": "owner",
  "DELETE /dashboard/users/{user_id}": "owner",
  "GET /dashboard/audit-log": "owner",
};
