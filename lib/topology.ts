/**
 * The one declaration of what the service is made of. The CDK stack (`payment-stack.ts`) and the
 * local stack (`local/`) are both built from this table: adding an endpoint is one line here plus
 * its handler in `functions/<handler>.ts`, which exports `handler`.
 */
import { DOCS_ASSET_FILES } from "../shared/docs/assets.ts";
import {
  EXPORT_DELIVERY_ITEM_TYPE,
  EXPORT_DELIVERY_QUEUE_URL_VARIABLE,
  EXPORT_ITEM_TYPE,
  EXPORT_QUEUE_URL_VARIABLE,
} from "../shared/exports/names.ts";
import { JOB_RETRY, JOB_TARGET_VARIABLES, type ScheduledJobKind } from "../shared/scheduling/port.ts";
import { RESEND_TYPE } from "../shared/webhooks/delivery.ts";
import { MAX_ATTEMPTS } from "../shared/webhooks/schedule.ts";
import { WEBHOOK_QUEUE_URL_VARIABLE } from "../shared/webhooks/settings.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** What a function may do to the table: `read` grants read-only access, `write` read and write. */
export type TableAccess = "read" | "write";

/**
 * What a function may do with the card vault (`shared/cards/vault.ts`): `seal` tokenizes cards (a new
 * data key per secret, and fingerprints), `open` reads a card's secrets to send them to a gateway.
 * Functions without it get no access to the card keys at all.
 */
export type CardVaultAccess = "seal" | "open";

export interface RouteDeclaration {
  method: HttpMethod;
  /** API Gateway path template, `{name}` for a path parameter. */
  path: string;
  /** Handler module under `functions/`, without extension. */
  handler: string;
  /** `none`: the function gets no access to the table at all (it serves what its code holds). */
  table: TableAccess | "none";
  cardVault?: CardVaultAccess;
  /**
   * Files of installed packages (`swagger-ui-dist/swagger-ui.css`) the function reads at run time:
   * copied next to its bundle when it is built, instead of being bundled into its code.
   */
  files?: readonly string[];
  /**
   * The function serves the scripts built for browsers (`lib/browser-assets.ts`): they are built
   * into its bundle.
   */
  browserAssets?: true;
  /**
   * The function serves the OpenAPI document: it is generated into its bundle when it is built
   * (`lib/contract/build.ts`), so that the bundle carries neither the contract nor its generator.
   */
  apiDocument?: true;
  /**
   * Set on a route that takes no credentials: why that is safe (it becomes the reason given where
   * the deployment acknowledges an API route without an authorizer).
   */
  unauthenticated?: string;
  /**
   * What a function may do with scheduled jobs (`shared/scheduling`): `schedule` creates (and
   * deletes) them, `cancel` only deletes them.
   */
  scheduler?: SchedulerAccess;
  /**
   * The function's timeout when 10 s is not enough: at most 29, since the HTTP API gives up on an
   * integration after 30 s. The local stack gives every handler 29 s.
   */
  timeoutSeconds?: number;
}

export type SchedulerAccess = "schedule" | "cancel";

/**
 * What a function may do with export files (`shared/exports/storage`): `write` creates them and reads
 * them back (to deliver them by SFTP). Functions without it get no access to the export bucket.
 */
export type ExportFilesAccess = "write";

const PUBLIC_DOCUMENTATION =
  "the API's own description (the OpenAPI document and the reference page rendering it) is public: it is generated from the code and holds no data of any project.";

const PRODUCT_LINK =
  "the shopper opens a product's payment link without credentials; the link's key (192 random bits, kept on the product) is what shows the product and makes an invoice of its price (nothing else), and paying that invoice takes the public key like any payment page.";

const THREE_DS_PAGE =
  "the shopper's browser opens the 3DS challenge page without credentials; the unguessable token in the path (192 random bits) selects the one open challenge it may answer, once.";

const DASHBOARD_SESSION =
  "the dashboard's routes take a person's session instead of an API key (shared/dashboard): sign-in is by password with growing delays and a lockout, every other route needs a live session (a 256-bit secret in an HttpOnly, Secure, SameSite=Strict cookie) whose role allows it, and every change the session's CSRF token.";

/**
 * The dashboard's routes (`functions/dashboard/<handler>`): every one reads or writes people and
 * sessions; the TOTP steps seal or open the person's TOTP secret in the card vault.
 */
function dashboardRoutes(
  list: readonly (readonly [HttpMethod, string, string, CardVaultAccess?])[],
): RouteDeclaration[] {
  return list.map(([method, path, handler, vault]) => ({
    method,
    path,
    handler: `dashboard/${handler}`,
    table: "write",
    ...(vault ? { cardVault: vault } : {}),
    unauthenticated: DASHBOARD_SESSION,
  }));
}

export const routes: readonly RouteDeclaration[] = [
  { method: "POST", path: "/customers", handler: "customers/create", table: "write" },
  { method: "GET", path: "/customers", handler: "customers/list", table: "read" },
  { method: "GET", path: "/customers/{customer_id}", handler: "customers/get", table: "read" },
  { method: "PUT", path: "/customers/{customer_id}", handler: "customers/update", table: "write" },
  { method: "DELETE", path: "/customers/{customer_id}", handler: "customers/delete", table: "write" },
  { method: "POST", path: "/invoices", handler: "invoices/create", table: "write" },
  { method: "GET", path: "/invoices", handler: "invoices/list", table: "read" },
  { method: "GET", path: "/invoices/{invoice_id}", handler: "invoices/get", table: "read" },
  { method: "PUT", path: "/invoices/{invoice_id}", handler: "invoices/update", table: "write" },
  { method: "DELETE", path: "/invoices/{invoice_id}", handler: "invoices/delete", table: "write" },
  { method: "POST", path: "/cards", handler: "cards/create", table: "write", cardVault: "seal" },
  { method: "GET", path: "/cards", handler: "cards/list", table: "read" },
  { method: "GET", path: "/cards/{card_id}", handler: "cards/get", table: "read" },
  { method: "PUT", path: "/cards/{card_id}", handler: "cards/update", table: "write", cardVault: "seal" },
  { method: "DELETE", path: "/cards/{card_id}", handler: "cards/delete", table: "write" },
  // What the schemes' IIN ranges tell of a card number being typed (no table beyond the caller's).
  { method: "GET", path: "/iins/{iin}", handler: "iins/get", table: "read" },
  // Creating and updating a token may verify its card with the gateway: they open the card.
  {
    method: "POST",
    path: "/customers/{customer_id}/tokens",
    handler: "customers/tokens/create",
    table: "write",
    cardVault: "open",
  },
  { method: "GET", path: "/customers/{customer_id}/tokens", handler: "customers/tokens/list", table: "read" },
  // A stored-value card's balance, asked of its provider by the card's public fields (shared/balances).
  { method: "GET", path: "/balances/tokens/{token_id}", handler: "balances/token", table: "read" },
  {
    method: "GET",
    path: "/customers/{customer_id}/tokens/{token_id}",
    handler: "customers/tokens/get",
    table: "read",
  },
  {
    method: "PUT",
    path: "/customers/{customer_id}/tokens/{token_id}",
    handler: "customers/tokens/update",
    table: "write",
    cardVault: "open",
  },
  {
    method: "DELETE",
    path: "/customers/{customer_id}/tokens/{token_id}",
    handler: "customers/tokens/delete",
    table: "write",
  },
  // Payments (shared/payments): authorize and capture open the card to send it to the gateway; every
  // payment route may open its gateway configuration's secret settings (a provider's API key).
  // Authorize schedules the capture of `auto_capture_at`; capture and void cancel it. A route that may
  // settle a sandbox capture or refund schedules its day's close (shared/payouts/settlement.ts).
  {
    method: "POST",
    path: "/invoices/{invoice_id}/authorize",
    handler: "invoices/authorize",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/capture",
    handler: "invoices/capture",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/increment_authorization",
    handler: "invoices/increment-authorization",
    cardVault: "open",
    table: "write",
    scheduler: "schedule",
  },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/void",
    handler: "invoices/void",
    cardVault: "open",
    table: "write",
    scheduler: "cancel",
  },
  // 3-D Secure without paying (two routes, one operation), and payouts to a card
  // (shared/payments/authenticate.ts, payout.ts): they open the card to send it to the gateway.
  {
    method: "POST",
    path: "/invoices/{invoice_id}/three-d-s",
    handler: "invoices/three-d-s",
    table: "write",
    cardVault: "open",
  },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/authenticate",
    handler: "invoices/authenticate",
    table: "write",
    cardVault: "open",
  },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/payout",
    handler: "invoices/payout",
    table: "write",
    cardVault: "open",
  },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/refunds",
    handler: "invoices/refund",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  {
    method: "GET",
    path: "/invoices/{invoice_id}/transactions",
    handler: "invoices/transactions",
    table: "read",
  },
  // The invoice's customer, as the client libraries read and set it (shared/invoices/customer.ts).
  { method: "GET", path: "/invoices/{invoice_id}/customers", handler: "invoices/customer", table: "read" },
  {
    method: "POST",
    path: "/invoices/{invoice_id}/customers",
    handler: "invoices/assign-customer",
    table: "write",
  },
  // Native APM payments (shared/payments/native.ts): each step may open the configuration's secrets.
  {
    method: "POST",
    path: "/invoices/{invoice_id}/native-payment",
    handler: "invoices/native-payment",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  {
    method: "GET",
    path: "/invoices/{invoice_id}/native-payment/{gateway_configuration_id}",
    handler: "invoices/native-payment-details",
    table: "read",
  },
  // Settles from the provider's record what we had missed (a lost answer, an awaited webhook).
  {
    method: "PUT",
    path: "/invoices/{invoice_id}/sync-with-psp",
    handler: "invoices/sync-with-psp",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  { method: "GET", path: "/transactions", handler: "transactions/list", table: "read" },
  // The same list, its options in a JSON body, as the client libraries send it.
  { method: "POST", path: "/transactions", handler: "transactions/search", table: "read" },
  { method: "GET", path: "/transactions/{transaction_id}", handler: "transactions/get", table: "read" },
  {
    method: "POST",
    path: "/transactions/{transaction_id}/refunds",
    handler: "transactions/refunds/create",
    cardVault: "open",
    table: "write",
    scheduler: "schedule",
  },
  {
    method: "GET",
    path: "/transactions/{transaction_id}/refunds",
    handler: "transactions/refunds/list",
    table: "read",
  },
  {
    method: "GET",
    path: "/transactions/{transaction_id}/refunds/{refund_id}",
    handler: "transactions/refunds/get",
    table: "read",
  },
  // The sandbox 3DS challenge page: no credentials, the unguessable token in the path is the secret.
  {
    method: "GET",
    path: "/3ds/{token}",
    handler: "challenges/show",
    table: "read",
    unauthenticated: THREE_DS_PAGE,
  },
  {
    method: "POST",
    path: "/3ds/{token}",
    handler: "challenges/answer",
    table: "write",
    unauthenticated: THREE_DS_PAGE,
  },
  // The browser's 3DS method page (3DS2), loaded in a hidden frame: it records nothing.
  {
    method: "GET",
    path: "/3ds/{token}/fingerprint",
    handler: "challenges/fingerprint",
    table: "read",
    unauthenticated: THREE_DS_PAGE,
  },
  // Where a provider's 3DS page (Stripe, Adyen) sends the cardholder back: it records the return.
  {
    method: "GET",
    path: "/3ds/{token}/return",
    handler: "challenges/return",
    table: "write",
    unauthenticated: THREE_DS_PAGE,
  },
  // Providers' webhooks (Stripe, Adyen), one address per configuration: verified by the provider's
  // signature with the configuration's secret, which the function opens.
  {
    method: "POST",
    path: "/gateway-webhooks/{gateway_configuration_id}",
    handler: "gateway-webhooks/receive",
    table: "write",
    cardVault: "open",
    unauthenticated:
      "payment providers send their webhooks without our credentials; each is verified by the provider's own signature (Stripe-Signature, Adyen's HMAC) with the configuration's sealed secret before anything is read, and an unverified one changes nothing.",
  },
  // The one catalogue of decline codes (shared/gateways/declines.ts).
  { method: "GET", path: "/error-codes", handler: "error-codes/list", table: "read" },
  // The activity log (shared/activities): who changed the environment's setup, what, when.
  { method: "GET", path: "/activities", handler: "activities/list", table: "read" },
  { method: "GET", path: "/activities/{activity_id}", handler: "activities/get", table: "read" },
  // Authorization statistics (shared/statistics): counted as attempts settle, read by the overview.
  { method: "GET", path: "/statistics", handler: "statistics/get", table: "read" },
  // Search (shared/search): payments and customers by id, card last four or email, from entries
  // written with what they index.
  { method: "GET", path: "/search", handler: "search/get", table: "read" },
  { method: "GET", path: "/events", handler: "events/list", table: "read" },
  { method: "GET", path: "/events/{event_id}", handler: "events/get", table: "read" },
  { method: "GET", path: "/events/{event_id}/webhooks", handler: "events/list-webhooks", table: "read" },
  // A resend is recorded in the table; the stream consumer below turns it into deliveries.
  { method: "POST", path: "/events/{event_id}/webhooks", handler: "events/resend-webhooks", table: "write" },
  // Plans (shared/plans): merchant-chosen ids.
  { method: "POST", path: "/plans", handler: "plans/create", table: "write" },
  { method: "GET", path: "/plans", handler: "plans/list", table: "read" },
  { method: "GET", path: "/plans/{plan_id}", handler: "plans/get", table: "read" },
  { method: "PUT", path: "/plans/{plan_id}", handler: "plans/update", table: "write" },
  { method: "DELETE", path: "/plans/{plan_id}", handler: "plans/delete", table: "write" },
  // Coupons (shared/coupons): merchant-chosen ids; subscriptions' discounts redeem them.
  { method: "POST", path: "/coupons", handler: "coupons/create", table: "write" },
  { method: "GET", path: "/coupons", handler: "coupons/list", table: "read" },
  { method: "GET", path: "/coupons/{coupon_id}", handler: "coupons/get", table: "read" },
  { method: "PUT", path: "/coupons/{coupon_id}", handler: "coupons/update", table: "write" },
  { method: "DELETE", path: "/coupons/{coupon_id}", handler: "coupons/delete", table: "write" },
  // Subscriptions (shared/subscriptions): creating one may turn a card into a customer token and
  // charge its first iteration at once; they schedule their renewals, trial notices and cancellations.
  {
    method: "POST",
    path: "/subscriptions",
    handler: "subscriptions/create",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  { method: "GET", path: "/subscriptions", handler: "subscriptions/list", table: "read" },
  {
    method: "GET",
    path: "/subscriptions/{subscription_id}",
    handler: "subscriptions/get",
    table: "read",
  },
  {
    method: "PUT",
    path: "/subscriptions/{subscription_id}",
    handler: "subscriptions/update",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
  },
  {
    method: "DELETE",
    path: "/subscriptions/{subscription_id}",
    handler: "subscriptions/delete",
    table: "write",
    scheduler: "schedule",
  },
  // A subscription's add-ons and discounts (shared/subscriptions/addons.ts, discounts.ts): kept in
  // the subscription's own item; a discount from a coupon counts its redemption in the same write.
  ...(["GET", "POST"] as const).map((method) => ({
    method,
    path: "/subscriptions/{subscription_id}/addons",
    handler: `subscriptions/addons/${method === "GET" ? "list" : "create"}`,
    table: method === "GET" ? ("read" as const) : ("write" as const),
  })),
  ...(["GET", "PUT", "DELETE"] as const).map((method) => ({
    method,
    path: "/subscriptions/{subscription_id}/addons/{addon_id}",
    handler: `subscriptions/addons/${method === "GET" ? "get" : method === "PUT" ? "update" : "delete"}`,
    table: method === "GET" ? ("read" as const) : ("write" as const),
  })),
  ...(["GET", "POST"] as const).map((method) => ({
    method,
    path: "/subscriptions/{subscription_id}/discounts",
    handler: `subscriptions/discounts/${method === "GET" ? "list" : "create"}`,
    table: method === "GET" ? ("read" as const) : ("write" as const),
  })),
  ...(["GET", "DELETE"] as const).map((method) => ({
    method,
    path: "/subscriptions/{subscription_id}/discounts/{discount_id}",
    handler: `subscriptions/discounts/${method === "GET" ? "get" : "delete"}`,
    table: method === "GET" ? ("read" as const) : ("write" as const),
  })),
  {
    method: "GET",
    path: "/subscriptions/{subscription_id}/customers",
    handler: "subscriptions/customer",
    table: "read",
  },
  {
    method: "GET",
    path: "/subscriptions/{subscription_id}/transactions",
    handler: "subscriptions/transactions",
    table: "read",
  },
  {
    method: "GET",
    path: "/customers/{customer_id}/subscriptions",
    handler: "customers/subscriptions",
    table: "read",
  },
  {
    method: "GET",
    path: "/customers/{customer_id}/transactions",
    handler: "customers/transactions",
    table: "read",
  },
  // The sandbox clock (shared/sandbox): advancing it runs the environment's due jobs (captures,
  // renewals) in the request, with what those jobs may do.
  { method: "GET", path: "/sandbox/clock", handler: "sandbox/get-clock", table: "read" },
  {
    method: "POST",
    path: "/sandbox/clock",
    handler: "sandbox/advance-clock",
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
    // It runs due jobs for `ADVANCE_WORK_MS` (10 s) and answers; a job under way may wait for a provider.
    timeoutSeconds: 29,
  },
  // Gateway configurations (shared/gateways): writing one seals its secret settings in the vault.
  {
    method: "GET",
    path: "/gateway-configurations",
    handler: "gateway-configurations/list",
    table: "read",
  },
  {
    method: "GET",
    path: "/gateway-configurations/{gateway_configuration_id}",
    handler: "gateway-configurations/get",
    table: "read",
  },
  {
    method: "PUT",
    path: "/gateway-configurations/{gateway_configuration_id}",
    handler: "gateway-configurations/update",
    table: "write",
    cardVault: "seal",
  },
  {
    method: "DELETE",
    path: "/gateway-configurations/{gateway_configuration_id}",
    handler: "gateway-configurations/delete",
    table: "write",
  },
  {
    method: "POST",
    path: "/gateways/{gateway_name}/gateway-configurations",
    handler: "gateway-configurations/create",
    table: "write",
    cardVault: "seal",
  },
  {
    method: "GET",
    path: "/gateways/{gateway_name}/gateway-configurations",
    handler: "gateway-configurations/list-of-gateway",
    table: "read",
  },
  // Routing rules (shared/routing): one versioned document per environment, and its simulation.
  { method: "GET", path: "/routing-rules", handler: "routing-rules/get", table: "read" },
  { method: "PUT", path: "/routing-rules", handler: "routing-rules/replace", table: "write" },
  { method: "POST", path: "/routing-rules/simulate", handler: "routing-rules/simulate", table: "read" },
  // Products (shared/products): reusable priced payment links.
  { method: "POST", path: "/products", handler: "products/create", table: "write" },
  { method: "GET", path: "/products", handler: "products/list", table: "read" },
  { method: "GET", path: "/products/{product_id}", handler: "products/get", table: "read" },
  { method: "PUT", path: "/products/{product_id}", handler: "products/update", table: "write" },
  { method: "DELETE", path: "/products/{product_id}", handler: "products/delete", table: "write" },
  {
    method: "POST",
    path: "/products/{product_id}/invoices",
    handler: "products/create-invoice",
    table: "write",
  },
  // A product's payment link: the page (a GET makes nothing), and its button, which makes the invoice.
  {
    method: "GET",
    path: "/pay/{project_id}/{product_id}",
    handler: "products/pay-page",
    table: "read",
    unauthenticated: PRODUCT_LINK,
  },
  {
    method: "POST",
    path: "/pay/{project_id}/{product_id}",
    handler: "products/pay",
    table: "write",
    unauthenticated: PRODUCT_LINK,
  },
  // Payouts (shared/payouts): what providers paid out, matched to transactions.
  { method: "GET", path: "/payouts", handler: "payouts/list", table: "read" },
  { method: "GET", path: "/payouts/{payout_id}", handler: "payouts/get", table: "read" },
  { method: "DELETE", path: "/payouts/{payout_id}", handler: "payouts/delete", table: "write" },
  { method: "GET", path: "/payouts/{payout_id}/items", handler: "payouts/items", table: "read" },
  // Exports (shared/exports): layouts, background exports, SFTP delivery.
  { method: "GET", path: "/exports/layouts", handler: "exports/layouts/list", table: "read" },
  { method: "POST", path: "/exports/layouts", handler: "exports/layouts/create", table: "write" },
  {
    method: "GET",
    path: "/exports/layouts/default/{export_type}",
    handler: "exports/layouts/default",
    table: "read",
  },
  {
    method: "GET",
    path: "/exports/layouts/options/{export_type}",
    handler: "exports/layouts/options",
    table: "read",
  },
  {
    method: "GET",
    path: "/exports/layouts/{export_layout_id}",
    handler: "exports/layouts/get",
    table: "read",
  },
  {
    method: "PUT",
    path: "/exports/layouts/{export_layout_id}",
    handler: "exports/layouts/update",
    table: "write",
  },
  {
    method: "DELETE",
    path: "/exports/layouts/{export_layout_id}",
    handler: "exports/layouts/delete",
    table: "write",
  },
  // An export is recorded pending; the table's stream queues its run (`exportRuns` below).
  { method: "POST", path: "/exports", handler: "exports/create", table: "write" },
  { method: "GET", path: "/exports", handler: "exports/list", table: "read" },
  { method: "GET", path: "/exports/{export_id}", handler: "exports/get", table: "read" },
  // Where automatic exports are delivered: setting them seals the password or private key.
  {
    method: "GET",
    path: "/projects/{project_id}/sftp-settings",
    handler: "sftp-settings/get",
    table: "read",
  },
  {
    method: "PUT",
    path: "/projects/{project_id}/sftp-settings",
    handler: "sftp-settings/update",
    table: "write",
    cardVault: "seal",
  },
  {
    method: "DELETE",
    path: "/projects/{project_id}/sftp-settings",
    handler: "sftp-settings/delete",
    table: "write",
  },
  // Reading a project may give an environment created before signing secrets its secret (a write).
  { method: "GET", path: "/projects/{project_id}", handler: "projects/get", table: "write" },
  { method: "PUT", path: "/projects/{project_id}", handler: "projects/update", table: "write" },
  // Deleting an environment (its own key, or its supervisor's); sub-merchants' projects (shared/projects).
  { method: "DELETE", path: "/projects/{project_id}", handler: "projects/delete", table: "write" },
  // An environment's private keys: several at once, rolled with an overlap, revoked (shared/projects/api-keys.ts).
  { method: "GET", path: "/api-keys", handler: "api-keys/list", table: "read" },
  { method: "POST", path: "/api-keys", handler: "api-keys/create", table: "write" },
  { method: "POST", path: "/api-keys/{api_key_id}/roll", handler: "api-keys/roll", table: "write" },
  { method: "DELETE", path: "/api-keys/{api_key_id}", handler: "api-keys/revoke", table: "write" },
  // The dashboard's people, sign-in, sessions and audit log (shared/dashboard): no API key, a session.
  ...dashboardRoutes([
    ["POST", "/dashboard/sign-in", "sign-in"],
    ["POST", "/dashboard/sign-in/totp", "sign-in-totp", "open"],
    ["POST", "/dashboard/sign-in/passkey/options", "sign-in-passkey-options"],
    ["POST", "/dashboard/sign-in/passkey", "sign-in-passkey"],
    ["GET", "/dashboard/session", "session"],
    ["POST", "/dashboard/sign-out", "sign-out"],
    ["POST", "/dashboard/sign-out-everywhere", "sign-out-everywhere"],
    ["POST", "/dashboard/totp", "totp-start", "seal"],
    ["POST", "/dashboard/totp/confirm", "totp-confirm", "open"],
    ["POST", "/dashboard/passkeys/options", "passkeys-options"],
    ["POST", "/dashboard/passkeys", "passkeys-register"],
    ["GET", "/dashboard/users", "users-list"],
    ["POST", "/dashboard/invitations", "invitations-create"],
    ["PUT", "/dashboard/users/{user_id}", "users-update"],
    ["DELETE", "/dashboard/users/{user_id}", "users-delete"],
    ["POST", "/dashboard/accept", "accept"],
    ["GET", "/dashboard/audit-log", "audit-log"],
  ]),
  { method: "POST", path: "/supervised-projects", handler: "supervised-projects/create", table: "write" },
  { method: "GET", path: "/supervised-projects", handler: "supervised-projects/list", table: "read" },
  // Apple Pay merchant certificates whose key pair we hold (shared/applepay): the key is sealed.
  {
    method: "GET",
    path: "/projects/applepay/alternative-merchant-certificates",
    handler: "applepay-certificates/list",
    table: "read",
  },
  {
    method: "POST",
    path: "/projects/applepay/alternative-merchant-certificates",
    handler: "applepay-certificates/create",
    table: "write",
    cardVault: "seal",
  },
  {
    method: "GET",
    path: "/projects/applepay/alternative-merchant-certificates/{certificate_id}",
    handler: "applepay-certificates/get",
    table: "read",
  },
  {
    method: "PUT",
    path: "/projects/applepay/alternative-merchant-certificates/{certificate_id}",
    handler: "applepay-certificates/activate",
    table: "write",
  },
  {
    method: "DELETE",
    path: "/projects/applepay/alternative-merchant-certificates/{certificate_id}",
    handler: "applepay-certificates/delete",
    table: "write",
  },
  // The contract, described (lib/contract): the OpenAPI document and its reference page.
  {
    method: "GET",
    path: "/openapi.json",
    handler: "docs/openapi",
    table: "none",
    apiDocument: true,
    unauthenticated: PUBLIC_DOCUMENTATION,
  },
  {
    method: "GET",
    path: "/docs",
    handler: "docs/page",
    table: "none",
    unauthenticated: PUBLIC_DOCUMENTATION,
  },
  {
    method: "GET",
    path: "/docs/{docs_file}",
    handler: "docs/asset",
    table: "none",
    files: DOCS_ASSET_FILES,
    unauthenticated: PUBLIC_DOCUMENTATION,
  },
  // The hosted checkout page of an invoice (shared/checkout) and the scripts served to browsers.
  {
    method: "GET",
    path: "/checkout/{project_id}/{invoice_id}",
    handler: "checkout/show",
    table: "read",
    unauthenticated:
      "the shopper opens the invoice's checkout link without credentials; the link's key (192 random bits, kept on the invoice) is what shows the invoice, and paying takes the public key like any payment page.",
  },
  {
    method: "GET",
    path: "/assets/{asset}",
    handler: "assets/get",
    table: "none",
    browserAssets: true,
    unauthenticated:
      "it serves the public scripts built for browsers (the payments module), and reads no data.",
  },
  // The merchant dashboard's page (functions/dashboard-page): the app it loads signs its user in.
  {
    method: "GET",
    path: "/dashboard",
    handler: "dashboard-page/show",
    table: "none",
    unauthenticated:
      "it serves the dashboard's empty page, the same for everyone, and reads no data: every call the app then makes is authenticated by the dashboard session.",
  },
];

/**
 * Cross-origin requests (CORS) of the whole HTTP API, the same for every route: API Gateway answers
 * preflights itself from its CORS configuration (`lib/payment-stack.ts`) and adds the allowed origin
 * to every answer, and the local stack does the same (`lib/local/http-server.ts`). Browsers call the
 * client-side operations from merchants' pages with the public key, which every other route refuses,
 * and a private key never belongs in a page: allowing any origin opens nothing. No cookies
 * are used, so no credentials mode. Headers are named one by one: a `*` would not cover
 * `Authorization`, which browsers never let a wildcard allow.
 */
export const cors = {
  allowOrigins: ["*"],
  allowMethods: ["GET", "POST", "PUT", "DELETE"],
  /** What the web client libraries send, beside the headers every browser may send. */
  allowHeaders: [
    "authorization",
    "content-type",
    "idempotency-key",
    "api-version",
    "x-processout-js-version",
    "x-processout-client-secret",
  ],
  /** Answer headers a page's script may read: the id to quote to support, and a replay's mark. */
  exposeHeaders: ["x-request-id", "idempotent-replayed"],
  /** How long a browser may reuse a preflight's answer. */
  maxAgeSeconds: 600,
} as const satisfies {
  allowOrigins: readonly string[];
  allowMethods: readonly HttpMethod[];
  allowHeaders: readonly string[];
  exposeHeaders: readonly string[];
  maxAgeSeconds: number;
};

/** Every request no route matches goes here (API Gateway's `$default` route): a 404 in JSON. */
export const fallbackRoute = { handler: "not-found", table: "none" } as const;

export const routeKey = (route: Pick<RouteDeclaration, "method" | "path">) => `${route.method} ${route.path}`;

/**
 * `customers/create` → `CustomersCreate`: the construct id of the route's function (any run of
 * characters other than letters and digits separates two words).
 */
export function functionId(handler: string): string {
  return handler
    .split(/[^a-zA-Z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

export const handlerEntry = (handler: string) => `functions/${handler}.ts`;

// ---- background work: queues, stream consumers, queue workers ----------------------------------

const DAY_SECONDS = 24 * 3600;

/**
 * Item actions a background function may take on the table (IAM `dynamodb:<action>`), and nothing
 * more: unlike routes, each background function is granted exactly the actions it uses.
 */
export type TableAction = "GetItem" | "PutItem" | "UpdateItem" | "Query";

export interface QueueDeclaration {
  /** Construct id in AWS (CloudFormation names the queue); the queue's name in the local stack. */
  id: string;
  /** The variable that tells the functions using the queue its URL. */
  urlVariable: string;
  /**
   * How long a received message stays hidden unless its worker changes it: at least the worker's
   * timeout, 6 times it as AWS advises for Lambda, so a batch is never received twice at once.
   */
  visibilityTimeoutSeconds: number;
  /** Longer than a message can stay in the queue on purpose (its retries). */
  retentionSeconds: number;
  /** A message received more than this many times moves to the queue's dead-letter queue, intact. */
  maxReceiveCount: number;
  deadLetterRetentionSeconds: number;
}

export const queues = {
  /**
   * One message per webhook delivery. A message is received once per attempt, so the receive count
   * is the attempt number and `maxReceiveCount` is the schedule's attempt count: the message of a
   * delivery that failed its last attempt moves to the dead-letter queue, whose messages raise an
   * alarm. Messages live 14 days, well beyond the retries (3 days 5 hours).
   */
  webhookDeliveries: {
    id: "WebhookDeliveries",
    urlVariable: WEBHOOK_QUEUE_URL_VARIABLE,
    visibilityTimeoutSeconds: 180,
    retentionSeconds: 14 * DAY_SECONDS,
    maxReceiveCount: MAX_ATTEMPTS,
    deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  },
  /**
   * One message per requested export's run (`shared/exports/queue.ts`), sent by the stream consumer
   * when the export is recorded. A run that fails comes back after the visibility timeout (6 times
   * the worker's 15 minutes), 5 times, then the message moves to the dead-letter queue (an alarm).
   */
  exportRuns: {
    id: "ExportRuns",
    urlVariable: EXPORT_QUEUE_URL_VARIABLE,
    visibilityTimeoutSeconds: 6 * 900,
    retentionSeconds: 4 * DAY_SECONDS,
    maxReceiveCount: 5,
    deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  },
  /**
   * One message per requested SFTP delivery of a completed export (`shared/exports/deliver.ts`). A
   * delivery that failed in a way a later try may fix (unreachable, timed out) comes back after the
   * visibility timeout (6 times the worker's), 8 times over about 2 hours, then moves to the
   * dead-letter queue; a refusal (host key, credentials) is recorded and not tried again.
   */
  exportDeliveries: {
    id: "ExportDeliveries",
    urlVariable: EXPORT_DELIVERY_QUEUE_URL_VARIABLE,
    visibilityTimeoutSeconds: 6 * 150,
    retentionSeconds: 4 * DAY_SECONDS,
    maxReceiveCount: 8,
    deadLetterRetentionSeconds: 14 * DAY_SECONDS,
  },
} as const satisfies Record<string, QueueDeclaration>;

export type QueueName = keyof typeof queues;

/**
 * A Lambda event filter pattern (the subset used here): each leaf lists the values the record's
 * field may have. The local stack's stream poller applies the same pattern the same way.
 */
export interface StreamFilterPattern {
  readonly [field: string]: readonly string[] | StreamFilterPattern;
}

/** A function fed by the table's stream (a Lambda event source mapping in AWS, a poller locally). */
export interface StreamConsumerDeclaration {
  handler: string;
  /** Only the records it matches reach the handler. */
  filter: StreamFilterPattern;
  batchSize: number;
  timeoutSeconds: number;
  table: readonly TableAction[];
  /** Queues the function sends messages to (it gets their URL and the right to send). */
  sendsTo: readonly QueueName[];
}

/** A function fed by a queue, with partial batch failures (`reportBatchItemFailures`). */
export interface QueueWorkerDeclaration {
  handler: string;
  queue: QueueName;
  batchSize: number;
  /** At most this many batches at once (Lambda's `maxConcurrency`; local pollers). */
  maxConcurrency: number;
  timeoutSeconds: number;
  table: readonly TableAction[];
  /** Writes export files (the stage's export bucket; a folder locally): `shared/exports/storage`. */
  exportFiles?: ExportFilesAccess;
  /** Opens sealed secrets, as the routes' `cardVault`. */
  cardVault?: CardVaultAccess;
}

export const streamConsumers: readonly StreamConsumerDeclaration[] = [
  {
    // Committed events and resends become queued deliveries (the transactional outbox's relay).
    handler: "webhooks/fan-out",
    filter: { eventName: ["INSERT"], dynamodb: { NewImage: { type: { S: ["event", RESEND_TYPE] } } } },
    batchSize: 100,
    timeoutSeconds: 60,
    // Reads the environment's webhook URL and a resent event; writes the deliveries.
    table: ["GetItem", "PutItem", "UpdateItem"],
    sendsTo: ["webhookDeliveries"],
  },
  {
    // A requested export, once recorded, becomes a queued run (the daily exports run in the daily
    // close); a delivery request, a queued SFTP delivery.
    handler: "exports/enqueue",
    filter: {
      eventName: ["INSERT"],
      dynamodb: { NewImage: { type: { S: [EXPORT_ITEM_TYPE, EXPORT_DELIVERY_ITEM_TYPE] } } },
    },
    batchSize: 100,
    timeoutSeconds: 30,
    table: [],
    sendsTo: ["exportRuns", "exportDeliveries"],
  },
];

export const queueWorkers: readonly QueueWorkerDeclaration[] = [
  {
    handler: "webhooks/deliver",
    queue: "webhookDeliveries",
    batchSize: 10,
    maxConcurrency: 10,
    timeoutSeconds: 30,
    // Reads deliveries and signing secrets (creating a missing one); writes attempts and delivery states.
    table: ["GetItem", "PutItem", "UpdateItem"],
  },
  {
    // Streams an export's rows as CSV into the export files (the stage's bucket): requested exports
    // and the daily ones (`runDailyExports` records them in the daily close).
    handler: "exports/run",
    queue: "exportRuns",
    batchSize: 1,
    maxConcurrency: 2,
    timeoutSeconds: 900,
    // Takes and finishes the export (conditional updates), reads its rows a page at a time, and
    // requests an automatic export's SFTP delivery (a put).
    table: ["GetItem", "UpdateItem", "Query", "PutItem"],
    exportFiles: "write",
  },
  {
    // Delivers an export by SFTP: the only function that loads the SSH client, and opens the sealed
    // SFTP password or key; it reads the file back from the export files.
    handler: "exports/deliver",
    queue: "exportDeliveries",
    batchSize: 1,
    maxConcurrency: 4,
    timeoutSeconds: 150,
    // Reads the export, its request and the settings; records the delivery and pins the host key.
    table: ["GetItem", "UpdateItem"],
    exportFiles: "write",
    cardVault: "open",
  },
];

// ---- scheduled jobs: one-time jobs at a given time (EventBridge Scheduler; the local scheduler) --

/** The function a kind of scheduled job runs, invoked with the job itself as its event. */
export interface ScheduledJobDeclaration {
  kind: ScheduledJobKind;
  handler: string;
  /**
   * The variable that tells a function allowed to schedule jobs (`scheduler: "schedule"`) the ARN of
   * this job's function, the target of its schedules (`shared/scheduling/index.ts` reads it).
   */
  functionArnVariable: string;
  timeoutSeconds: number;
  table: TableAccess;
  cardVault?: CardVaultAccess;
  /** Lets the job schedule (or cancel) one-time jobs, as the routes' `scheduler`. */
  scheduler?: SchedulerAccess;
  /**
   * The kinds of jobs it schedules, when not every other kind: it is told only their functions' ARNs
   * (two jobs each told the other's ARN would be a dependency cycle in CloudFormation).
   */
  schedules?: readonly ScheduledJobKind[];
  /** Attempts and age before a failing job is given up to the dead-letter queue. */
  retry: { maximumAttempts: number; maximumEventAgeSeconds: number };
}

export const scheduledJobs = {
  /**
   * `auto_capture_at`: captures the invoice's authorization. It sends no card, but may open its
   * gateway configuration's secret settings.
   */
  captureInvoice: {
    kind: "capture-invoice",
    handler: "jobs/capture-invoice",
    functionArnVariable: JOB_TARGET_VARIABLES["capture-invoice"],
    timeoutSeconds: 30,
    table: "write",
    cardVault: "open",
    // A capture schedules its day's close (shared/payouts/settlement.ts), and nothing else.
    scheduler: "schedule",
    schedules: ["daily-close"],
    retry: JOB_RETRY,
  },
  /**
   * A subscription's work: charges an iteration with its token (it opens the card), sends a trial's
   * notice, cancels at a date; a charge schedules the next one (or a dunning retry).
   */
  subscription: {
    kind: "subscription",
    handler: "jobs/subscription",
    functionArnVariable: JOB_TARGET_VARIABLES.subscription,
    timeoutSeconds: 60,
    table: "write",
    cardVault: "open",
    scheduler: "schedule",
    retry: JOB_RETRY,
  },
  /**
   * The close of an environment's business day (`shared/payouts/close.ts`): the sandbox gateway's
   * payouts of the day, then the day's exports.
   */
  dailyClose: {
    kind: "daily-close",
    handler: "jobs/daily-close",
    functionArnVariable: JOB_TARGET_VARIABLES["daily-close"],
    timeoutSeconds: 300,
    table: "write",
    retry: JOB_RETRY,
  },
} as const satisfies Record<string, ScheduledJobDeclaration>;

// ---- recurring jobs: a function run at a fixed rate (EventBridge Scheduler) ---------------------

/**
 * A function run every `rateMinutes`, whatever the data (e.g. resolving expired payment
 * reservations, finding due subscription renewals). Its event is
 * `{ "recurringJob": <its name in recurringJobs>, "scheduledTime": <ISO 8601 time of the run> }`.
 * A run may come late, twice, or overlap the previous one: it decides from current state.
 */
export interface RecurringJobDeclaration {
  handler: string;
  /** Runs every this many minutes (a whole number, at least 1). */
  rateMinutes: number;
  /** At most `rateMinutes` (and Lambda's 900), so that runs cannot pile up. */
  timeoutSeconds: number;
  table: TableAccess;
  cardVault?: CardVaultAccess;
  /** Lets the job schedule (or cancel) one-time jobs, as the routes' `scheduler`. */
  scheduler?: SchedulerAccess;
}

export const recurringJobs = {
  /**
   * Settles payment operations whose request died between the gateway call and its settlement
   * (`shared/payments/recovery.ts`). It may open gateway configurations' secret settings.
   */
  recoverReservations: {
    handler: "jobs/recover-reservations",
    rateMinutes: 1,
    timeoutSeconds: 55,
    table: "write",
    cardVault: "open",
    // A sandbox capture or refund it settles schedules its day's close.
    scheduler: "schedule",
  },
} as const satisfies Record<string, RecurringJobDeclaration>;

// ---- the whole topology -------------------------------------------------------------------------

/** Everything above in one value: the CDK stack takes it (tests pass synthetic ones). */
export interface Topology {
  routes: readonly RouteDeclaration[];
  queues: Readonly<Record<QueueName, QueueDeclaration>>;
  streamConsumers: readonly StreamConsumerDeclaration[];
  queueWorkers: readonly QueueWorkerDeclaration[];
  scheduledJobs: Readonly<Record<string, ScheduledJobDeclaration>>;
  recurringJobs: Readonly<Record<string, RecurringJobDeclaration>>;
}

export const topology: Topology = {
  routes,
  queues,
  streamConsumers,
  queueWorkers,
  scheduledJobs,
  recurringJobs,
};

/** The handlers of every function: routes, the fallback, stream consumers, queue workers and jobs. */
export function allHandlers(of: Topology = topology): string[] {
  return [
    ...new Set([
      ...of.routes.map((route) => route.handler),
      fallbackRoute.handler,
      ...of.streamConsumers.map((consumer) => consumer.handler),
      ...of.queueWorkers.map((worker) => worker.handler),
      ...Object.values(of.scheduledJobs).map((job) => job.handler),
      ...Object.values(of.recurringJobs).map((job) => job.handler),
    ]),
  ];
}
