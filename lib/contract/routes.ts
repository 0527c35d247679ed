/**
 * The contract of every route of `lib/topology.ts`: what it is for, what it takes (the route's own
 * zod input schema, as its domain parses it), what it answers, and what it can expand. The OpenAPI
 * document is generated from this and the topology (`document.ts`); a unit test holds every route
 * of the topology to an entry here, and the contract test holds live answers to the schemas.
 */

import { cardChangeFields, cardFields } from "../../shared/cards/schema.ts";
import { createCouponInput, updateCouponInput } from "../../shared/coupons/schema.ts";
import { createCustomerInput, updateCustomerInput } from "../../shared/customers/schema.ts";
import type { ResourceType } from "../../shared/expansion/fields.ts";
import {
  createLayoutInput,
  requestExportInput,
  sftpSettingsInput,
  updateLayoutInput,
} from "../../shared/exports/schema.ts";
import { configurationInput } from "../../shared/gateways/schema.ts";
import { createInvoiceInput, updateInvoiceInput } from "../../shared/invoices/schema.ts";
import { nativePaymentInput } from "../../shared/payments/native.ts";
import {
  authenticateInput,
  authorizeInput,
  captureInput,
  incrementInput,
  payoutInput,
  refundInput,
} from "../../shared/payments/schema.ts";
import { createPlanInput, updatePlanInput } from "../../shared/plans/schema.ts";
import { createProductInput, updateProductInput } from "../../shared/products/schema.ts";
import { apiKeyInput, apiKeyRollInput } from "../../shared/projects/api-keys.ts";
import { supervisedProjectInput } from "../../shared/projects/supervision.ts";
import { rulesInput, simulationInput } from "../../shared/routing/schema.ts";
import { advanceInput } from "../../shared/sandbox/clock.ts";
import {
  cancelSubscriptionInput,
  createAddonInput,
  createDiscountInput,
  createSubscriptionInput,
  updateAddonInput,
  updateSubscriptionInput,
} from "../../shared/subscriptions/schema.ts";
import { createTokenInput, updateTokenInput } from "../../shared/tokens/schema.ts";
import * as z from "../../shared/validation/zod.ts";
import { projectChanges } from "../../shared/webhooks/project-settings.ts";
import {
  activitySchema,
  addonSchema,
  apiKeySchema,
  applepayCertificateSchema,
  auditEntrySchema,
  balancesSchema,
  billingAnswerShape,
  cardInformationSchema,
  cardSchema,
  changedCardSchema,
  couponSchema,
  createdSupervisedProjectSchema,
  customerActionSchema,
  customerSchema,
  dashboardInvitationSchema,
  dashboardSessionSchema,
  dashboardUserSchema,
  discountSchema,
  eventSchema,
  exportLayoutOptionsSchema,
  exportLayoutSchema,
  exportSchema,
  gatewayConfigurationSchema,
  invoiceSchema,
  listedApiKeySchema,
  nativeApmSchema,
  payoutItemSchema,
  payoutSchema,
  planSchema,
  productSchema,
  projectSettingsSchema,
  refundSchema,
  routingExplanationSchema,
  routingRulesSchema,
  sftpSettingsSchema,
  statisticsSchema,
  subscriptionSchema,
  supervisedProjectSchema,
  tokenSchema,
  transactionSchema,
} from "./resources.ts";

/** What a route answers on success. */
export type RouteAnswer =
  | { kind: "json"; status: number; schema: z.core.$ZodType }
  | { kind: "document"; contentType: string; description: string };

export interface RouteContract {
  summary: string;
  description?: string;
  /** The body it reads (JSON or form-encoded alike), as its domain parses it. */
  body?: z.core.$ZodType;
  /** Parameters of the query string, besides the listing ones and `expand`. */
  query?: z.ZodMiniObject;
  /** A list route: `limit`, `order`, `start_after`, `end_before`. */
  listing?: true;
  /** The resource its answer presents and expands (`expand`). */
  expand?: ResourceType;
  /** `project-id`: the project id alone (the public key) will do, as browsers and apps send it. */
  credentials?: "project-id";
  answer: RouteAnswer;
  /** A request body worth showing. */
  example?: Record<string, unknown>;
}

const success = <T extends z.core.$ZodShape>(shape: T, status = 200): RouteAnswer => ({
  kind: "json",
  status,
  schema: z.strictObject({ success: z.literal(true), ...shape }),
});
const one = (name: string, schema: z.core.$ZodType) => success({ [name]: schema });
const page = (name: string, schema: z.core.$ZodType) =>
  success({
    [name]: z.array(schema),
    count: z.int().check(z.meta({ description: "Items in this page" })),
    has_more: z.boolean(),
    total_count: z.int().check(z.meta({ description: "Items in the whole list" })),
    limit: z.int(),
    order: z.enum(["asc", "desc"]),
  });
const done = success({});
/** The private key gets the transaction and always `customer_action`; the public key only an action to run. */
const payment = success({
  transaction: z.optional(transactionSchema).check(z.meta({ description: "Only to the private key" })),
  customer_action: z.optional(customerActionSchema),
});

const flag = z.optional(z.enum(["true", "false"]));

/** Every sign-in step answers the person and their (new) session. */
const signedInAnswer = success({
  user: z.nullable(dashboardUserSchema),
  session: dashboardSessionSchema,
});
const dashboardSignInInput = z.object({ email: z.string(), password: z.string() });

/** When a change of what a subscription bills is billed, and whether it is only a preview. */
const timingFields = {
  prorate: z.optional(z.boolean()).check(z.meta({ description: "Bill the rest of the current period" })),
  proration_date: z.optional(z.iso.datetime()).check(z.meta({ description: "Prorate from (default: now)" })),
  preview: z
    .optional(z.boolean())
    .check(z.meta({ description: "Change nothing; answer what it would bill" })),
};
const optionalBilling = Object.fromEntries(
  Object.entries(billingAnswerShape).map(([name, schema]) => [name, z.optional(schema)]),
);

const cardInput = z.extend(cardFields, {
  number: z.string().check(z.meta({ description: "The card number" })),
});

const invoiceExample = {
  name: "Order 42",
  amount: "19.90",
  currency: "EUR",
  customer_id: "cust_01JZ5Y8W9E0000000000000000",
  metadata: { order: "42" },
};

export const contract: Readonly<Record<string, RouteContract>> = {
  "POST /customers": {
    summary: "Create a customer",
    body: createCustomerInput,
    expand: "customer",
    answer: one("customer", customerSchema),
    example: {
      first_name: "Ada",
      last_name: "Lovelace",
      email: "ada@example.com",
      metadata: { plan: "gold" },
    },
  },
  "GET /customers": {
    summary: "List customers",
    listing: true,
    expand: "customer",
    answer: page("customers", customerSchema),
  },
  "GET /customers/{customer_id}": {
    summary: "Get a customer",
    expand: "customer",
    answer: one("customer", customerSchema),
  },
  "PUT /customers/{customer_id}": {
    summary: "Update a customer",
    description: "Changes the fields sent; read-only fields sent back as read (`balance`…) are ignored.",
    body: updateCustomerInput,
    expand: "customer",
    answer: one("customer", customerSchema),
  },
  "DELETE /customers/{customer_id}": { summary: "Delete a customer and its tokens", answer: done },
  "POST /invoices": {
    summary: "Create an invoice",
    body: createInvoiceInput,
    expand: "invoice",
    answer: one("invoice", invoiceSchema),
    example: invoiceExample,
  },
  "GET /invoices": {
    summary: "List invoices",
    listing: true,
    expand: "invoice",
    answer: page("invoices", invoiceSchema),
  },
  "GET /invoices/{invoice_id}": {
    summary: "Get an invoice",
    expand: "invoice",
    answer: one("invoice", invoiceSchema),
  },
  "PUT /invoices/{invoice_id}": {
    summary: "Update an invoice",
    description: "Only while no payment was attempted (else 409 `request.invoice.payment-attempted`).",
    body: updateInvoiceInput,
    expand: "invoice",
    answer: one("invoice", invoiceSchema),
  },
  "DELETE /invoices/{invoice_id}": { summary: "Delete an invoice no payment was attempted on", answer: done },
  "POST /cards": {
    summary: "Tokenize a card",
    description: "The project id alone authenticates, as browser and mobile libraries send it.",
    credentials: "project-id",
    body: cardInput,
    answer: one("card", cardSchema),
    example: { number: "4242424242424242", exp_month: 12, exp_year: 2030, cvc2: "123" },
  },
  "GET /cards/{card_id}": { summary: "Get a card", answer: one("card", cardSchema) },
  "GET /cards": {
    summary: "List cards",
    description:
      "The environment's cards that can still pay, newest first (a deleted card is anonymized and gone).",
    listing: true,
    answer: page("cards", cardSchema),
  },
  "PUT /cards/{card_id}": {
    summary: "Give a card a new CVC or preferred scheme",
    description:
      "As the mobile libraries send it; the project id alone authenticates, and must send a change (`cvc` or `preferred_scheme`): it is answered the card without the holder's name, the fingerprint or the metadata.",
    credentials: "project-id",
    body: cardChangeFields,
    answer: one("card", changedCardSchema),
    example: { cvc: "123", preferred_scheme: "visa" },
  },
  "GET /iins/{iin}": {
    summary: "What the IIN ranges tell of a card number being typed",
    credentials: "project-id",
    answer: one("card_information", cardInformationSchema),
  },
  "DELETE /cards/{card_id}": { summary: "Anonymize a card", answer: done },
  "POST /customers/{customer_id}/tokens": {
    summary: "Create a customer token",
    description:
      "With `source` (a card id) it can pay at once; with `verify=true` and no source it waits for one.",
    body: createTokenInput,
    expand: "token",
    answer: success({ token: tokenSchema, customer_action: customerActionSchema }),
    example: { source: "card_01JZ5Y8W9E0000000000000000" },
  },
  "GET /balances/tokens/{token_id}": {
    summary: "A customer token's stored-value balance",
    description:
      "The vouchers and available total of a gift card saved as a customer token, asked of the provider that verified it (else the first enabled card configuration). The sandbox's gift cards are test cards; a card that holds no balance is a 400 `request.token.no-balance`, a gateway that tells none `request.gateway.balance-not-supported`.",
    answer: one("balances", balancesSchema),
  },
  "GET /customers/{customer_id}/tokens": {
    summary: "List a customer's tokens",
    listing: true,
    expand: "token",
    answer: page("tokens", tokenSchema),
  },
  "GET /customers/{customer_id}/tokens/{token_id}": {
    summary: "Get a customer token",
    expand: "token",
    answer: success({ token: tokenSchema, customer_action: customerActionSchema }),
  },
  "PUT /customers/{customer_id}/tokens/{token_id}": {
    summary: "Update a customer token, or attach and verify its card",
    description:
      "From a browser or app (the public key) it only attaches a source, through 3DS rounds when the issuer asks: `source` is then the card again, or the `gway_req_…` answer of the last round.",
    credentials: "project-id",
    body: updateTokenInput,
    expand: "token",
    answer: success({ token: tokenSchema, customer_action: z.optional(customerActionSchema) }),
  },
  "DELETE /customers/{customer_id}/tokens/{token_id}": { summary: "Delete a customer token", answer: done },
  "POST /invoices/{invoice_id}/authorize": {
    summary: "Authorize an invoice",
    description:
      "From the merchant's server or, with the public key, the shopper's browser or app; after a 3DS round, `source` is the card again or the `gway_req_…` answer.",
    credentials: "project-id",
    body: authorizeInput,
    expand: "transaction",
    answer: payment,
    example: { source: "card_01JZ5Y8W9E0000000000000000" },
  },
  "POST /invoices/{invoice_id}/capture": {
    summary: "Capture an invoice",
    description:
      "Without a source, captures the invoice's authorization; with one, authorizes first (only, with `authorize_only`). The public key needs a card source.",
    credentials: "project-id",
    body: captureInput,
    expand: "transaction",
    answer: payment,
  },
  "POST /invoices/{invoice_id}/increment_authorization": {
    credentials: "project-id",
    summary: "Increment an authorization",
    body: incrementInput,
    expand: "transaction",
    answer: one("transaction", transactionSchema),
    example: { amount: "5.00" },
  },
  "POST /invoices/{invoice_id}/void": {
    summary: "Void an invoice's authorization",
    expand: "transaction",
    answer: one("transaction", transactionSchema),
  },
  "POST /invoices/{invoice_id}/three-d-s": {
    summary: "Start 3-D Secure without paying",
    description:
      "The cardholder authenticates for the invoice with `source` (the same rounds as an authorization's; after a round, `source` is the card again or the `gway_req_…` answer); nothing is reserved with the issuer. A later authorize or capture with the same card keeps the authentication (no new challenge); another card starts over. Answers `customer_action` (`{}` once authenticated) and the transaction.",
    body: authenticateInput,
    expand: "transaction",
    answer: payment,
    example: { source: "card_01JZ5Y8W9E0000000000000000", enable_three_d_s_2: true },
  },
  "POST /invoices/{invoice_id}/authenticate": {
    summary: "Authenticate the cardholder without paying",
    description:
      "The same operation as `three-d-s`, with authorize's keys, answered as authorize answers. The Node and Ruby clients send it to the literal path `/invoices/:invoice_id/authenticate`, which names no invoice: 404 `resource.invoice.not-found`.",
    body: authenticateInput,
    expand: "transaction",
    answer: payment,
    example: { source: "card_01JZ5Y8W9E0000000000000000" },
  },
  "POST /invoices/{invoice_id}/payout": {
    summary: "Pay the invoice's amount out to a card",
    description:
      "An original credit to the card or customer token `source`, through `gateway_configuration_id` (else the first configuration whose gateway pays out to cards; `force_gateway_configuration_id` pins it, and a payout never moves to another). The invoice's one transaction, `completed` with an operation of type `payout`. An invoice paid, being paid or paid out is a 409; a gateway that cannot pay out to cards (Stripe, Adyen's Checkout API) a 400 naming `gateway_configuration_id`.",
    body: payoutInput,
    expand: "transaction",
    answer: one("transaction", transactionSchema),
    example: { source: "card_01JZ5Y8W9E0000000000000000", metadata: { reason: "winnings" } },
  },
  "POST /invoices/{invoice_id}/refunds": {
    summary: "Refund an invoice's payment",
    body: refundInput,
    expand: "transaction",
    answer: success({ refund: refundSchema, transaction: transactionSchema }),
    example: { amount: "5.00", reason: "customer_request" },
  },
  "PUT /invoices/{invoice_id}/sync-with-psp": {
    summary: "Settle an invoice's payment from the provider's record",
    description:
      "Asks the payment provider where the invoice's payment stands and settles what we had missed: an operation left reserved (its answer lost, or awaited from the provider's webhook). A 409 while a request is settling it; a 504 when the provider cannot tell yet. Answers the invoice. The official clients send it with an empty body.",
    expand: "invoice",
    answer: one("invoice", invoiceSchema),
  },
  "GET /invoices/{invoice_id}/transactions": {
    summary: "Get an invoice's transaction",
    description: "An invoice has one transaction; `null` before any payment.",
    expand: "transaction",
    answer: success({ transaction: z.nullable(transactionSchema) }),
  },
  "GET /invoices/{invoice_id}/customers": {
    summary: "Get an invoice's customer",
    description: "A 404 when the invoice has none.",
    expand: "customer",
    answer: one("customer", customerSchema),
  },
  "POST /invoices/{invoice_id}/customers": {
    summary: "Set an invoice's customer",
    description:
      "Before any payment is attempted (then a 409), as `PUT /invoices/{id}` with `customer_id` would; answers the customer.",
    body: z.object({ customer_id: z.string() }),
    expand: "customer",
    answer: one("customer", customerSchema),
    example: { customer_id: "cust_…" },
  },
  "POST /invoices/{invoice_id}/native-payment": {
    credentials: "project-id",
    summary: "Take a step of a native APM payment",
    description: "JSON body.",
    body: nativePaymentInput,
    expand: "transaction",
    answer: success({ native_apm: nativeApmSchema, transaction: transactionSchema }),
    example: {
      gateway_configuration_id: "gway_conf_01JZ5Y8W9E0000000000000000.sandbox",
      native_apm: { parameter_values: { email: "native-apm-success@example.com" } },
    },
  },
  "GET /invoices/{invoice_id}/native-payment/{gateway_configuration_id}": {
    credentials: "project-id",
    summary: "Get where a native APM payment stands",
    expand: "transaction",
    answer: success({
      native_apm: z.looseObject({ state: z.nullable(z.string()) }),
      transaction: z.nullable(transactionSchema),
    }),
  },
  "GET /transactions": {
    summary: "List transactions",
    listing: true,
    expand: "transaction",
    answer: page("transactions", transactionSchema),
  },
  "POST /transactions": {
    summary: "List transactions (options in the body)",
    description:
      "The list `GET /transactions` answers, for the client libraries that send its options (`limit`, `order`, `start_after`, `end_before`, `expand`) in a JSON body.",
    listing: true,
    expand: "transaction",
    answer: page("transactions", transactionSchema),
  },
  "GET /transactions/{transaction_id}": {
    summary: "Get a transaction",
    expand: "transaction",
    answer: one("transaction", transactionSchema),
  },
  "POST /transactions/{transaction_id}/refunds": {
    summary: "Refund a transaction",
    body: refundInput,
    expand: "transaction",
    answer: success({ refund: refundSchema, transaction: transactionSchema }),
  },
  "GET /transactions/{transaction_id}/refunds": {
    summary: "List a transaction's refunds",
    answer: success({ refunds: z.array(refundSchema) }),
  },
  "GET /transactions/{transaction_id}/refunds/{refund_id}": {
    summary: "Get a refund",
    answer: one("refund", refundSchema),
  },
  "GET /3ds/{token}": {
    summary: "The sandbox 3DS challenge page",
    description: "An HTML page a `customer_action` of type `url` points to; no credentials.",
    answer: { kind: "document", contentType: "text/html", description: "The challenge page" },
  },
  "POST /3ds/{token}": {
    summary: "Answer the sandbox 3DS challenge",
    body: z.object({ result: z.enum(["approved", "failed"]) }),
    answer: { kind: "document", contentType: "text/html", description: "A redirect (303) or a page" },
  },
  "GET /3ds/{token}/fingerprint": {
    summary: "The sandbox's browser 3DS method page",
    description:
      "Opened in a hidden frame (`customer_action` of type `fingerprint`); posts its `gway_req_…` answer to its parent. No credentials.",
    answer: { kind: "document", contentType: "text/html", description: "The 3DS method page" },
  },
  "GET /3ds/{token}/return": {
    summary: "Where a provider's 3-D Secure page sends the cardholder back",
    description:
      "The return address a Stripe or Adyen configuration gives its provider: records the return (with the provider's `redirectResult`), then tells the framing page it is done, or goes to the invoice's `return_url`. The payment sent again completes it. No credentials.",
    answer: { kind: "document", contentType: "text/html", description: "The return page" },
  },
  "POST /gateway-webhooks/{gateway_configuration_id}": {
    summary: "A payment provider's webhook (Stripe, Adyen)",
    description:
      "The address to register at the provider for this gateway configuration. No credentials: verified by the provider's signature (Stripe-Signature with the configuration's `webhook_secret`, 300 s tolerance; Adyen's HMAC with its `hmac_key`); an unverified one is a 400 and changes nothing. A verified one settles what the provider decided (an Adyen capture, a refund that failed) with our events. A 503 asks the provider to send it again (a request is settling the payment at that moment).",
    answer: success({ received: z.optional(z.boolean()), notificationResponse: z.optional(z.string()) }),
  },
  "GET /error-codes": {
    summary: "The decline codes, by category",
    description:
      "Every `error_type` a refusal by a provider can carry, whatever the provider said: `gateway` lists them by category (as the official clients read it), `codes` says of each whether another attempt may succeed (`soft`) or none can (`hard`).",
    answer: success({
      gateway: z.record(z.string(), z.array(z.string())),
      codes: z.array(
        z.strictObject({
          code: z.string(),
          category: z.string(),
          retry: z.enum(["soft", "hard"]),
          message: z.string(),
        }),
      ),
    }),
  },
  "GET /activities": {
    summary: "List the activity log",
    description:
      "Who changed the environment's setup (settings, gateway configurations, routing rules, export layouts and SFTP settings, products, coupons, supervised projects, certificates), what, when, and with which credential, newest first. Payments and customers have their events.",
    listing: true,
    answer: page("activities", activitySchema),
  },
  "GET /activities/{activity_id}": {
    summary: "Get an entry of the activity log",
    answer: one("activity", activitySchema),
  },
  "GET /statistics": {
    summary: "Authorization statistics over time",
    description:
      "The environment's authorization attempts (approved, declined, failed) and approved amounts per currency, by gateway configuration, in hourly or daily buckets (UTC) from `from` (rounded down) to `to`: at most 31 days by hour, 366 by day. Without `to`, now; without `from`, a day (hourly) or 30 days (daily) before `to`. The authorization rate is approved / (approved + declined). Counted with each attempt's outcome, exactly once.",
    query: z.object({
      from: z.optional(z.string()),
      to: z.optional(z.string()),
      interval: z.optional(z.enum(["hour", "day"])),
    }),
    answer: one("statistics", statisticsSchema),
  },
  "GET /search": {
    summary: "Search payments and customers",
    description:
      "Finds, in the environment, by `query`: a transaction, invoice or customer id (that object; an invoice answers its transaction), exactly four digits (the transactions paid with a card ending in them), or an email (the customers with that email, trimmed and in any case, and their transactions). Newest first, at most `limit` of each (default 20, at most 100). Anything else is a 400 naming `query`. `expand` applies to the transactions.",
    expand: "transaction",
    query: z.object({ query: z.string(), limit: z.optional(z.string()) }),
    answer: success({
      query: z.string().check(z.meta({ description: "The query as searched (trimmed)" })),
      kind: z.enum(["transaction_id", "invoice_id", "customer_id", "card_last_4", "email"]),
      transactions: z.array(transactionSchema),
      customers: z.array(customerSchema),
    }),
  },
  "GET /events": {
    summary: "List events",
    description:
      "With `transaction_id` or `invoice_id` (one of them), the events about that transaction or invoice, paged alike.",
    listing: true,
    query: z.object({ transaction_id: z.optional(z.string()), invoice_id: z.optional(z.string()) }),
    answer: page("events", eventSchema),
  },
  "GET /events/{event_id}": { summary: "Get an event", answer: one("event", eventSchema) },
  "GET /events/{event_id}/webhooks": {
    summary: "List an event's webhook attempts and deliveries",
    answer: success({
      webhooks: z.array(z.looseObject({ id: z.string() })),
      deliveries: z.array(z.looseObject({})),
    }),
  },
  "POST /events/{event_id}/webhooks": {
    summary: "Deliver an event again",
    answer: success({ resend: z.looseObject({ id: z.string() }) }, 202),
  },
  "POST /plans": {
    summary: "Create a plan",
    body: createPlanInput,
    answer: one("plan", planSchema),
    example: { id: "gold-monthly", name: "Gold", amount: "9.90", currency: "EUR", interval: "1m" },
  },
  "GET /plans": { summary: "List plans", listing: true, answer: page("plans", planSchema) },
  "GET /plans/{plan_id}": { summary: "Get a plan", answer: one("plan", planSchema) },
  "PUT /plans/{plan_id}": {
    summary: "Update a plan",
    body: updatePlanInput,
    answer: one("plan", planSchema),
  },
  "DELETE /plans/{plan_id}": { summary: "End a plan", answer: done },
  "POST /coupons": {
    summary: "Create a coupon",
    description:
      "Under an id the merchant chooses: `amount_off` (with its `currency`) or `percent_off`, for `iteration_count` billing periods (absent: for good), at most `max_redemptions` times, until `expires_at`.",
    body: createCouponInput,
    answer: one("coupon", couponSchema),
    example: { id: "WELCOME20", percent_off: "20", iteration_count: 3, max_redemptions: 100 },
  },
  "GET /coupons": { summary: "List coupons", listing: true, answer: page("coupons", couponSchema) },
  "GET /coupons/{coupon_id}": { summary: "Get a coupon", answer: one("coupon", couponSchema) },
  "PUT /coupons/{coupon_id}": {
    summary: "Update a coupon's metadata",
    description: "Its other fields are fixed: sent, they must be the coupon's own values.",
    body: updateCouponInput,
    answer: one("coupon", couponSchema),
  },
  "DELETE /coupons/{coupon_id}": {
    summary: "End a coupon",
    description: "It can no longer be redeemed, and its id stays taken; discounts made from it go on.",
    answer: done,
  },
  "POST /subscriptions": {
    summary: "Subscribe a customer",
    body: createSubscriptionInput,
    expand: "subscription",
    answer: one("subscription", subscriptionSchema),
    example: {
      customer_id: "cust_01JZ5Y8W9E0000000000000000",
      plan_id: "gold-monthly",
      source: "card_01JZ5Y8W9E0000000000000000",
    },
  },
  "GET /subscriptions": {
    summary: "List subscriptions",
    listing: true,
    expand: "subscription",
    answer: page("subscriptions", subscriptionSchema),
  },
  "GET /subscriptions/{subscription_id}": {
    summary: "Get a subscription",
    expand: "subscription",
    answer: one("subscription", subscriptionSchema),
  },
  "PUT /subscriptions/{subscription_id}": {
    summary: "Update a subscription",
    description:
      "New terms apply from the next renewal; with `prorate=true` (same interval) from now, the rest of the period charged or credited with the next renewal. `preview=true` changes nothing and answers what it would bill. `trial_end_at` (`now` or a date) ends or moves the trial, while the subscription is in it (409 `request.subscription.not-trialing` after): `now` charges the first iteration at once.",
    body: z.extend(updateSubscriptionInput, timingFields),
    expand: "subscription",
    answer: success({ subscription: subscriptionSchema, ...optionalBilling }),
  },
  "DELETE /subscriptions/{subscription_id}": {
    summary: "Cancel a subscription",
    description: "Now, at the end of the period paid for (`cancel_at_end=true`), or at `cancel_at`.",
    query: z.extend(cancelSubscriptionInput, {
      cancel_at_end: z.optional(z.enum(["true", "false", "True", "False"])),
    }),
    expand: "subscription",
    answer: one("subscription", subscriptionSchema),
  },
  "GET /subscriptions/{subscription_id}/addons": {
    summary: "List a subscription's add-ons",
    listing: true,
    answer: page("addons", addonSchema),
  },
  "POST /subscriptions/{subscription_id}/addons": {
    summary: "Add an add-on to a subscription",
    description:
      "Billed with each renewal. `prorate=true` charges the rest of the current period with the next renewal; `preview=true` changes nothing and answers what it would bill.",
    body: z.extend(createAddonInput, timingFields),
    answer: success({ addon: addonSchema, ...billingAnswerShape }),
    example: { name: "Extra seat", amount: "4.00", quantity: 3, prorate: true },
  },
  "GET /subscriptions/{subscription_id}/addons/{addon_id}": {
    summary: "Get an add-on",
    answer: one("addon", addonSchema),
  },
  "PUT /subscriptions/{subscription_id}/addons/{addon_id}": {
    summary: "Change an add-on",
    description: "`increment_quantity_by` counts from the quantity stored, safe when changes race.",
    body: z.extend(updateAddonInput, timingFields),
    answer: success({ addon: addonSchema, ...billingAnswerShape }),
  },
  "DELETE /subscriptions/{subscription_id}/addons/{addon_id}": {
    summary: "Remove an add-on",
    description: "Not billed from the next renewal on; `prorate=true` credits the rest of the period.",
    query: z.object(timingFields),
    answer: success({ addon: addonSchema, ...billingAnswerShape }),
  },
  "GET /subscriptions/{subscription_id}/discounts": {
    summary: "List a subscription's discounts",
    listing: true,
    answer: page("discounts", discountSchema),
  },
  "POST /subscriptions/{subscription_id}/discounts": {
    summary: "Give a subscription a discount",
    description:
      "From a coupon (`coupon_id`, one redemption counted) or ad hoc (`amount`, `name`, `expires_at`). Percentages apply first, then amounts, each in the order added, never below zero.",
    body: z.extend(createDiscountInput, { preview: timingFields.preview }),
    answer: success({ discount: discountSchema, ...billingAnswerShape }),
    example: { coupon_id: "SPRING20" },
  },
  "GET /subscriptions/{subscription_id}/discounts/{discount_id}": {
    summary: "Get a discount",
    answer: one("discount", discountSchema),
  },
  "DELETE /subscriptions/{subscription_id}/discounts/{discount_id}": {
    summary: "Remove a discount",
    description: "It no longer applies from the next renewal that is not yet due.",
    answer: success({ discount: discountSchema, ...billingAnswerShape }),
  },
  "GET /subscriptions/{subscription_id}/customers": {
    summary: "Get a subscription's customer",
    expand: "customer",
    answer: one("customer", customerSchema),
  },
  "GET /subscriptions/{subscription_id}/transactions": {
    summary: "List a subscription's transactions",
    description: "One per renewal attempt that reached a payment.",
    listing: true,
    expand: "transaction",
    answer: page("transactions", transactionSchema),
  },
  "GET /customers/{customer_id}/subscriptions": {
    summary: "List a customer's subscriptions",
    listing: true,
    expand: "subscription",
    answer: page("subscriptions", subscriptionSchema),
  },
  "GET /customers/{customer_id}/transactions": {
    summary: "List a customer's transactions",
    listing: true,
    expand: "transaction",
    answer: page("transactions", transactionSchema),
  },
  "GET /sandbox/clock": {
    summary: "Read the sandbox clock",
    answer: success({ clock: z.strictObject({ now: z.string() }) }),
  },
  "POST /sandbox/clock": {
    summary: "Advance the sandbox clock and run the jobs that fall due",
    description:
      "Runs the environment's due jobs in due order for about 10 seconds (at most 500), the clock walking through each one's due time. When time runs out first, the clock stays where the work stands and `jobs_remaining` says how many jobs are still due: send the same request again to go on. One advance runs at a time per environment: another one meanwhile is a 409 `request.sandbox.clock-advancing`.",
    body: advanceInput,
    answer: success({
      clock: z.strictObject({ now: z.string() }),
      jobs: z.array(z.looseObject({ name: z.string(), kind: z.string(), outcome: z.string() })),
      jobs_remaining: z.int(),
    }),
  },
  "GET /gateway-configurations": {
    credentials: "project-id",
    summary: "List gateway configurations",
    listing: true,
    query: z.object({
      filter: z.optional(z.enum(["native-alternative-payment-methods", "card-payments"])),
      with_disabled: flag,
      expand_merchant_accounts: flag,
    }),
    answer: page("gateway_configurations", gatewayConfigurationSchema),
  },
  "GET /gateway-configurations/{gateway_configuration_id}": {
    summary: "Get a gateway configuration",
    query: z.object({ expand_merchant_accounts: flag }),
    answer: one("gateway_configuration", gatewayConfigurationSchema),
  },
  "PUT /gateway-configurations/{gateway_configuration_id}": {
    summary: "Update a gateway configuration",
    body: configurationInput,
    answer: one("gateway_configuration", gatewayConfigurationSchema),
  },
  "DELETE /gateway-configurations/{gateway_configuration_id}": {
    summary: "Delete a gateway configuration",
    answer: done,
  },
  "POST /gateways/{gateway_name}/gateway-configurations": {
    summary: "Create a gateway configuration",
    body: configurationInput,
    answer: one("gateway_configuration", gatewayConfigurationSchema),
    example: { name: "Sandbox cards", default_currency: "EUR", settings: { merchant_account: "acme" } },
  },
  "GET /gateways/{gateway_name}/gateway-configurations": {
    summary: "List the configurations of one gateway",
    description:
      "As `GET /gateway-configurations`, restricted to one gateway (`sandbox`, `stripe`, `adyen`); an unknown gateway is a 404.",
    listing: true,
    query: z.object({
      filter: z.optional(z.enum(["native-alternative-payment-methods", "card-payments"])),
      with_disabled: flag,
      expand_merchant_accounts: flag,
    }),
    answer: page("gateway_configurations", gatewayConfigurationSchema),
  },
  "GET /routing-rules": {
    summary: "Get the environment's routing rules",
    description:
      "One versioned document: the ordered rules (the first that matches a card payment decides) and the default order of the card configurations.",
    answer: one("routing_rules", routingRulesSchema),
  },
  "PUT /routing-rules": {
    summary: "Replace the routing rules",
    description:
      "Names the `version` it replaces (0 before the first): a change made meanwhile is a 409. Conditions: currencies, amount_min/amount_max, card_schemes, card_types, card_countries, countries, initiator, metadata. Actions: route (a chain), split (weights), block (reason), require_three_d_s.",
    body: rulesInput,
    answer: one("routing_rules", routingRulesSchema),
    example: {
      version: 0,
      rules: [
        {
          name: "Debit cards to the cheaper acquirer",
          conditions: { card_types: ["debit"] },
          action: { type: "route", gateway_configuration_ids: ["gway_conf_…"], max_attempts: 2 },
        },
      ],
    },
  },
  "POST /routing-rules/simulate": {
    summary: "Explain where a hypothetical card payment would go",
    description: "The routing explanation a payment would get now, without moving money: `card_id` or `iin`.",
    body: simulationInput,
    answer: one("routing", routingExplanationSchema),
    example: { amount: "25.00", currency: "EUR", iin: "424242" },
  },
  // Products
  "POST /products": {
    summary: "Create a product (a reusable payment link)",
    body: createProductInput,
    answer: one("product", productSchema),
    example: { name: "Gold membership", amount: "19.90", currency: "EUR" },
  },
  "GET /products": { summary: "List products", listing: true, answer: page("products", productSchema) },
  "GET /products/{product_id}": { summary: "Get a product", answer: one("product", productSchema) },
  "PUT /products/{product_id}": {
    summary: "Update a product",
    description: "Invoices made from the product before keep what they copied.",
    body: updateProductInput,
    answer: one("product", productSchema),
  },
  "DELETE /products/{product_id}": {
    summary: "Delete a product",
    description: "Its payment link stops working; invoices made from it stay.",
    answer: done,
  },
  "POST /products/{product_id}/invoices": {
    summary: "Make an invoice from a product",
    description: "A new invoice of the product's name, amount, currency, metadata and URLs (an empty body).",
    expand: "invoice",
    answer: one("invoice", invoiceSchema),
  },
  "GET /pay/{project_id}/{product_id}": {
    summary: "A product's payment link",
    description:
      "The product's `url`: a page with the product and a Pay button; opening it makes nothing (link previews and crawlers fetch links). Its `key` (in the `url` only) opens it; no credentials.",
    query: z.object({
      key: z.string().check(z.meta({ description: "The link's key, from the product's `url`" })),
    }),
    answer: { kind: "document", contentType: "text/html", description: "The product's page" },
  },
  "POST /pay/{project_id}/{product_id}": {
    summary: "Pay a product's link: a new invoice, then its checkout page",
    description:
      "What the link page's button posts (`key`, and `visit`: the same visit posted again goes to the same invoice). Answers 303 to the new invoice's checkout page; no credentials.",
    body: z.object({
      key: z.string().check(z.meta({ description: "The link's key, from the product's `url`" })),
      visit: z.optional(z.string().check(z.meta({ description: "The visit's value, from the link page" }))),
    }),
    answer: {
      kind: "document",
      contentType: "text/html",
      description: "A 303 to the invoice's checkout page",
    },
  },
  // Payouts
  "GET /payouts": {
    summary: "List payouts",
    description:
      "What providers paid out to the merchant, newest first: the sandbox gateway's daily payouts (made by the close of each business day, at 00:00 of the next on the environment's clock) and the payouts of each Stripe configuration (read by that close).",
    listing: true,
    answer: page("payouts", payoutSchema),
  },
  "GET /payouts/{payout_id}": {
    summary: "Get a payout",
    description:
      "With its `reconciliation`: `matched` when every item matches what its transaction settled and every transaction the day settled through the configuration is paid out; else `mismatched`, with how many items differ and which transactions went unpaid. A provider's payout (Stripe) is checked again against our transactions as they stand each time it is fetched.",
    answer: one("payout", payoutSchema),
  },
  "DELETE /payouts/{payout_id}": { summary: "Delete a payout and its items", answer: done },
  "GET /payouts/{payout_id}/items": {
    summary: "List a payout's items",
    description:
      "Each money movement the payout contains (sales positive, refunds and chargebacks negative), matched to its transaction, with its fees broken down (`breakdown`, whose parts sum to `fees`), `reconciled` and, when it is not, the `mismatch`. Listed under `items`.",
    listing: true,
    answer: page("items", payoutItemSchema),
  },
  // Exports
  "GET /exports/layouts": {
    summary: "List export layouts",
    listing: true,
    answer: page("export_layouts", exportLayoutSchema),
  },
  "POST /exports/layouts": {
    summary: "Create an export layout",
    description:
      "Columns (each possibly renamed), time format and amount format of an export type; `is_default` makes it the layout of that type's automatic daily export (the previous default stops being one).",
    body: createLayoutInput,
    answer: one("export_layout", exportLayoutSchema),
    example: {
      name: "Finance",
      type: "transactions",
      is_default: true,
      configuration: {
        columns: [
          { name: "id", rename: "Transaction" },
          { name: "amount", rename: null },
        ],
        time: { format: "date_time" },
        amount: { precision: 2, separator: "," },
      },
    },
  },
  "GET /exports/layouts/default/{export_type}": {
    summary: "The default layout of an export type",
    description: "The environment's default layout of the type, or the built-in one (every column; id null).",
    answer: one("export_layout", exportLayoutSchema),
  },
  "GET /exports/layouts/options/{export_type}": {
    summary: "What a layout of an export type may choose",
    answer: one("export_layout_configuration_options", exportLayoutOptionsSchema),
  },
  "GET /exports/layouts/{export_layout_id}": {
    summary: "Get an export layout",
    answer: one("export_layout", exportLayoutSchema),
  },
  "PUT /exports/layouts/{export_layout_id}": {
    summary: "Update an export layout",
    description: "Name, configuration and `is_default`; its type never changes.",
    body: updateLayoutInput,
    answer: one("export_layout", exportLayoutSchema),
  },
  "DELETE /exports/layouts/{export_layout_id}": { summary: "Delete an export layout", answer: done },
  "POST /exports": {
    summary: "Request an export",
    description:
      "The rows of `type` created in `[from, to)` as CSV in a layout (`layout_id`; else the default, else the built-in one). It runs in the background: `pending`, then `completed` with `rows`, `size` and `location`.",
    body: requestExportInput,
    answer: one("export", exportSchema),
    example: { type: "transactions", from: "2026-11-01T00:00:00Z", to: "2026-12-01T00:00:00Z" },
  },
  "GET /exports": { summary: "List exports", listing: true, answer: page("exports", exportSchema) },
  "GET /exports/{export_id}": { summary: "Get an export", answer: one("export", exportSchema) },
  "GET /projects/{project_id}/sftp-settings": {
    summary: "Where automatic exports are delivered",
    description: "Never the password nor the private key.",
    answer: one("sftp_settings", sftpSettingsSchema),
  },
  "PUT /projects/{project_id}/sftp-settings": {
    summary: "Set the SFTP server automatic exports are delivered to",
    description:
      "`endpoint` (host:port), `username`, and `password` or `private_key` (sealed, never answered). The server's host key is pinned on the first delivery; a different key later is refused.",
    body: sftpSettingsInput,
    answer: done,
  },
  "DELETE /projects/{project_id}/sftp-settings": {
    summary: "Stop delivering automatic exports",
    answer: done,
  },
  "DELETE /projects/{project_id}": {
    summary: "Delete a project",
    description:
      "The caller's own environment (a live one takes its sandbox with it; a sandbox goes alone), or a project it supervises. Its keys are refused from then on and its scheduled work stops; its records are kept. Any other id, and the path's placeholder the client libraries send (`/projects/%7Bproject_id%7D`), is a 404.",
    answer: done,
  },
  "GET /api-keys": {
    summary: "List the environment's private keys",
    description:
      "Every key the environment holds, newest first: never a key itself, nor its hash. The key the environment was created with is listed too, with `last4` null.",
    answer: one("api_keys", z.array(listedApiKeySchema)),
  },
  "POST /api-keys": {
    summary: "Create a private key",
    description:
      "A new key beside the others (at most 10 that open requests). `private_key` is in this answer only: a replay of its `Idempotency-Key` answers it as null. Other containers know the key within 30 seconds; a request it opens meanwhile is looked up again, never refused.",
    body: apiKeyInput,
    answer: success({
      api_key: apiKeySchema,
      private_key: z.nullable(z.string()).check(z.meta({ description: "Shown once" })),
    }),
    example: { name: "Checkout server" },
  },
  "POST /api-keys/{api_key_id}/roll": {
    summary: "Roll a private key",
    description:
      "A new key replaces this one, which still works for `overlap_seconds` (default 86400, at most 604800; 0 ends it now). `private_key` is in this answer only.",
    body: apiKeyRollInput,
    answer: success({
      api_key: apiKeySchema,
      private_key: z.nullable(z.string()).check(z.meta({ description: "Shown once" })),
      rolled_api_key: apiKeySchema,
    }),
    example: { overlap_seconds: 3600 },
  },
  "DELETE /api-keys/{api_key_id}": {
    summary: "Revoke a private key",
    description:
      "The key opens nothing from now on (other containers within 30 seconds). The environment's last key that opens requests cannot be revoked: a 409.",
    answer: one("api_key", apiKeySchema),
  },
  "POST /dashboard/sign-in": {
    summary: "Sign in to the dashboard",
    description:
      "Sets the `__Host-session` cookie (HttpOnly, Secure, SameSite=Strict). `session.second_factor` is `required` when the person has a TOTP or a passkey to give next (the session opens nothing else meanwhile), `not-enrolled` when they have none (sandbox only). Failed attempts are counted per person (and per email): after 3, each waits a growing delay, after 10 signing in is locked 15 minutes (429 with `Retry-After`).",
    body: dashboardSignInInput,
    answer: signedInAnswer,
    example: { email: "owner@example.com", password: "correct horse battery staple" },
  },
  "POST /dashboard/sign-in/totp": {
    summary: "Give the second factor: a TOTP code",
    description:
      "With the session of the password step and its `X-CSRF-Token`. A code is accepted once. The session is replaced (new id, secret, cookie and CSRF token).",
    body: z.object({ code: z.string() }),
    answer: signedInAnswer,
  },
  "POST /dashboard/sign-in/passkey/options": {
    summary: "WebAuthn options to give a passkey as the second factor",
    description: "With the session of the password step: the challenge is kept with it.",
    answer: success({ options: z.record(z.string(), z.unknown()) }),
  },
  "POST /dashboard/sign-in/passkey": {
    summary: "Give the second factor: a passkey",
    description:
      "`credential`: the browser's `navigator.credentials.get` answer as JSON. The session is replaced.",
    body: z.object({ credential: z.record(z.string(), z.unknown()) }),
    answer: signedInAnswer,
  },
  "GET /dashboard/session": {
    summary: "The signed-in person and their session",
    description:
      "401 `request.dashboard.signed-out` without a live session. Extends the session's idle expiry (30 minutes).",
    answer: signedInAnswer,
  },
  "POST /dashboard/sign-out": { summary: "End this session", answer: done },
  "POST /dashboard/sign-out-everywhere": {
    summary: "End every session of the person",
    answer: success({ sessions_ended: z.int() }),
  },
  "POST /dashboard/totp": {
    summary: "Start enrolling a TOTP authenticator",
    description:
      "The secret and its `otpauth://` URI (for a QR code), shown now only; confirm it with a code.",
    answer: success({ secret: z.string(), otpauth_uri: z.string() }),
  },
  "POST /dashboard/totp/confirm": {
    summary: "Confirm the TOTP authenticator with a code",
    description:
      "From then on the person gives a code (or a passkey) after the password; this session counts as having given it.",
    body: z.object({ code: z.string() }),
    answer: signedInAnswer,
  },
  "POST /dashboard/passkeys/options": {
    summary: "WebAuthn options to register a passkey",
    answer: success({ options: z.record(z.string(), z.unknown()) }),
  },
  "POST /dashboard/passkeys": {
    summary: "Register a passkey",
    description: "`credential`: the browser's `navigator.credentials.create` answer as JSON.",
    body: z.object({ credential: z.record(z.string(), z.unknown()) }),
    answer: signedInAnswer,
  },
  "GET /dashboard/users": {
    summary: "The project's people (owners)",
    answer: success({ users: z.array(dashboardUserSchema) }),
  },
  "POST /dashboard/invitations": {
    summary: "Invite a person (owners)",
    description:
      "`link` is shown in this answer only (no mail is sent): the person opens it and sets a password. Valid 7 days, once.",
    body: z.object({ email: z.string(), role: z.enum(["owner", "developer", "support", "read-only"]) }),
    answer: success({ invitation: dashboardInvitationSchema, link: z.string() }),
    example: { email: "support@example.com", role: "support" },
  },
  "PUT /dashboard/users/{user_id}": {
    summary: "Change a person's role (owners)",
    description: "Their sessions end. An owner cannot change their own role.",
    body: z.object({ role: z.enum(["owner", "developer", "support", "read-only"]) }),
    answer: success({ user: dashboardUserSchema }),
  },
  "DELETE /dashboard/users/{user_id}": {
    summary: "Remove a person (owners)",
    description: "Their sessions end. An owner cannot remove themselves.",
    answer: done,
  },
  "POST /dashboard/accept": {
    summary: "Accept an invitation or a sign-in link",
    description: "Sets the person's password (12 to 256 characters) and signs them in; the token is used up.",
    body: z.object({ token: z.string(), password: z.string() }),
    answer: signedInAnswer,
  },
  "GET /dashboard/audit-log": {
    summary: "The project's audit log (owners)",
    description:
      "Every change made through the dashboard (recorded before it runs, with its outcome after), sign-ins, sign-outs, invitations, role changes and enrolments; newest first. Page with `limit` (1 to 100) and `starting_after` (the last id of the page before).",
    query: z.object({ limit: z.optional(z.string()), starting_after: z.optional(z.string()) }),
    answer: success({ audit_log: z.array(auditEntrySchema), has_more: z.boolean(), limit: z.int() }),
  },
  "POST /supervised-projects": {
    summary: "Create a sub-merchant's project",
    description:
      "A project whose `supervisor_project_id` is the caller's environment, with its own keys (answered once). A sandbox supervisor makes a sandbox-only project; a live one, both environments (`sandbox_project`). `dunning_configuration` sets the retries of its subscriptions' declined renewals. The supervisor's keys open none of its data.",
    body: supervisedProjectInput,
    answer: one("project", createdSupervisedProjectSchema),
    example: {
      name: "Corner bakery",
      default_currency: "EUR",
      dunning_configuration: [
        { action: "retry", delay_in_days: 2 },
        { action: "retry", delay_in_days: 5 },
        { action: "cancel" },
      ],
    },
  },
  "GET /supervised-projects": {
    summary: "List the projects this environment created",
    listing: true,
    answer: page("projects", supervisedProjectSchema),
  },
  "GET /projects/applepay/alternative-merchant-certificates": {
    summary: "List the Apple Pay merchant certificates",
    description: "`count` is a string, as the client libraries read it.",
    answer: one(
      "applepay_certificates",
      z.strictObject({
        count: z.string(),
        alternative_merchant_certificates: z.array(applepayCertificateSchema),
      }),
    ),
  },
  "POST /projects/applepay/alternative-merchant-certificates": {
    summary: "Make an Apple Pay certificate's key pair and CSR",
    description:
      "An EC P-256 key pair (the private key sealed, never shown) and its certificate signing request: upload `csr` to Apple, then the certificate Apple makes with `PUT …/{certificate_id}`. The clients send an empty body.",
    answer: one("alternative_merchant_certificate", applepayCertificateSchema),
  },
  "GET /projects/applepay/alternative-merchant-certificates/{certificate_id}": {
    summary: "Get an Apple Pay certificate, with its CSR",
    answer: one("alternative_merchant_certificate", applepayCertificateSchema),
  },
  "PUT /projects/applepay/alternative-merchant-certificates/{certificate_id}": {
    summary: "Upload Apple's certificate",
    description:
      "`certificate`, PEM or base64 DER: it must carry this key pair's public key and be valid now; the certificate becomes active. Rotate by activating a new one before deleting the old.",
    body: z.object({ certificate: z.string() }),
    answer: one("alternative_merchant_certificate", applepayCertificateSchema),
  },
  "DELETE /projects/applepay/alternative-merchant-certificates/{certificate_id}": {
    summary: "Delete an Apple Pay certificate and its key pair",
    answer: done,
  },
  "GET /projects/{project_id}": {
    summary: "Get the caller's environment settings",
    answer: one("project", projectSettingsSchema),
  },
  "PUT /projects/{project_id}": {
    summary: "Set the caller's webhook URL",
    body: projectChanges,
    answer: one("project", projectSettingsSchema),
  },
  "GET /checkout/{project_id}/{invoice_id}": {
    summary: "An invoice's hosted checkout page",
    description:
      "The invoice's `url`: the page that shows what is paid and takes a card. Its `key` (in the `url` only) opens it; no credentials.",
    query: z.object({
      key: z.string().check(z.meta({ description: "The link's key, from the invoice's `url`" })),
    }),
    answer: { kind: "document", contentType: "text/html", description: "The checkout page" },
  },
  "GET /assets/{asset}": {
    summary: "A script for browsers",
    description:
      "`payments.js`, the payments module merchants import on their pages; `checkout.js`, the checkout page's; `dashboard.js` and `dashboard.css`, the dashboard's.",
    answer: { kind: "document", contentType: "text/javascript", description: "The script" },
  },
  "GET /dashboard": {
    summary: "The merchant dashboard",
    description:
      "The dashboard's page: its screens are hash routes (`/dashboard#/payments`), an invitation's or sign-in link's token is in the fragment (`/dashboard#/accept?token=…`). No credentials: the page signs its user in.",
    answer: { kind: "document", contentType: "text/html", description: "The dashboard's page" },
  },
  "GET /openapi.json": {
    summary: "This document",
    answer: { kind: "document", contentType: "application/json", description: "The OpenAPI 3.1 document" },
  },
  "GET /docs": {
    summary: "The API reference page",
    answer: { kind: "document", contentType: "text/html", description: "A page that renders this document" },
  },
  "GET /docs/{docs_file}": {
    summary: "A file of the API reference page",
    answer: {
      kind: "document",
      contentType: "application/octet-stream",
      description: "A script, a style sheet or an image",
    },
  },
};
