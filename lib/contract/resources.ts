/**
 * The resources as the API presents them, as zod schemas: the response side of the contract. The
 * OpenAPI document (`document.ts`) is generated from them, and a test validates answers recorded
 * from live requests against that document (`test/integration/contract.test.ts`), so a presenter
 * that changes what it shows fails there until its schema here says so.
 *
 * The main resources are strict (no field they do not list); an expandable link is an optional field
 * beside its `_id` (`expand`). Schemas carry their OpenAPI component name in `components`.
 */
import * as z from "zod";

const id = (description: string) => z.string().meta({ description });
const timestamp = z.iso.datetime({ offset: false }).meta({ description: "ISO 8601 UTC timestamp" });
const amount = z
  .string()
  .meta({ description: "Decimal string in the currency's major unit", examples: ["10.50"] });
const dictionary = z.record(z.string(), z.string());
const nullableText = z.string().nullable();

export const projectSchema = z.strictObject({
  id: id("The environment's project id: `test-proj_…` (sandbox) or `proj_…` (live)"),
  name: z.string(),
  sandbox: z.boolean(),
  created_at: timestamp,
});

export const cardSchema = z.strictObject({
  id: id("`card_…`"),
  project_id: z.string(),
  scheme: z.string().meta({ description: "From the IIN ranges; `unknown` when no scheme holds the number" }),
  co_scheme: nullableText,
  preferred_scheme: nullableText,
  type: z.enum(["credit", "debit", "unknown"]).meta({ description: "`unknown` without a BIN table to tell" }),
  bank_name: nullableText,
  brand: nullableText,
  category: nullableText,
  iin: z.string(),
  last_4_digits: z.string(),
  exp_month: z.int(),
  exp_year: z.int(),
  expires_soon: z.boolean().meta({ description: "The card expires this month or in the next two" }),
  cvc_check: z.enum(["pending", "unavailable", "unknown", "failed", "passed"]),
  avs_check: z.enum(["pending", "unavailable", "unknown", "failed", "passed"]),
  name: nullableText,
  fingerprint: z.string(),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** What the schemes' IIN ranges tell of the cards an IIN starts (`GET /iins/{iin}`). */
export const cardInformationSchema = z.strictObject({
  scheme: z.string(),
  co_scheme: nullableText,
  type: nullableText,
  bank_name: nullableText,
  brand: nullableText,
  category: nullableText,
  country: nullableText,
});

export const planSchema = z.strictObject({
  id: id("Chosen by the merchant"),
  project_id: z.string(),
  name: z.string(),
  amount,
  currency: z.string(),
  interval: z.string().meta({ description: "`1d2w3m4y`: days, weeks, months, years" }),
  trial_period: nullableText,
  metadata: dictionary,
  return_url: nullableText,
  cancel_url: nullableText,
  sandbox: z.boolean(),
  created_at: timestamp,
});

const operationSchema = z.strictObject({
  id: z.string(),
  type: z.string(),
  amount,
  success: z.boolean(),
  error_code: nullableText,
  created_at: timestamp,
});

export const refundSchema = z.strictObject({
  id: id("`re_…`"),
  transaction_id: z.string(),
  amount,
  reason: z.enum(["customer_request", "duplicate", "fraud"]).nullable(),
  information: nullableText,
  has_failed: z.boolean(),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
});

const nativeApmParameter = z.looseObject({ key: z.string(), type: z.string(), required: z.boolean() });
export const nativeApmSchema = z.looseObject({
  state: z.string().nullable(),
  parameters: z.array(nativeApmParameter).nullable(),
  parameterDefinitions: z.array(nativeApmParameter).nullable(),
  parameterValues: z.looseObject({ message: nullableText }),
});

/**
 * Schemas of the resources that link to one another (an invoice's customer, a customer's tokens…),
 * declared with getters: zod resolves them lazily, and the document refers to each by name.
 */
export const customerSchema = z.strictObject({
  id: id("`cust_…`"),
  project_id: z.string(),
  get project() {
    return projectSchema.optional();
  },
  default_token_id: nullableText,
  get tokens() {
    return z.array(tokenSchema).nullable().meta({ description: "Null unless expanded" });
  },
  get subscriptions() {
    return z.array(subscriptionSchema).nullable().meta({ description: "Null unless expanded" });
  },
  get transactions() {
    return z
      .array(transactionSchema)
      .nullable()
      .meta({ description: "Null unless expanded: the customer's 100 most recent, oldest first" });
  },
  balance: amount,
  currency: nullableText,
  email: nullableText,
  first_name: nullableText,
  last_name: nullableText,
  address1: nullableText,
  address2: nullableText,
  city: nullableText,
  state: nullableText,
  zip: nullableText,
  country_code: nullableText,
  phone_number: nullableText,
  legal_document: nullableText,
  is_business: z.boolean(),
  date_of_birth: nullableText,
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const tokenSchema = z.strictObject({
  id: id("`tok_…`"),
  customer_id: z.string(),
  get customer() {
    return customerSchema.optional();
  },
  gateway_configuration_id: nullableText,
  card: cardSchema.nullable(),
  card_id: nullableText,
  type: z.enum(["card", "bank_account", "gateway_token"]),
  metadata: dictionary,
  is_default: z.boolean(),
  is_chargeable: z.boolean(),
  verification_status: z.enum(["success", "pending", "failed", "not-requested", "unknown"]),
  return_url: nullableText,
  cancel_url: nullableText,
  webhook_url: nullableText,
  description: nullableText,
  created_at: timestamp,
});

export const transactionSchema = z.strictObject({
  id: id("`tr_…`"),
  project_id: z.string(),
  get project() {
    return projectSchema.optional();
  },
  invoice_id: z.string(),
  get invoice() {
    return invoiceSchema.nullable().optional();
  },
  customer_id: nullableText,
  get customer() {
    return customerSchema.nullable().optional();
  },
  subscription_id: nullableText,
  token_id: nullableText,
  get token() {
    return tokenSchema.nullable().optional();
  },
  card_id: nullableText,
  card: cardSchema.nullable().optional(),
  gateway_configuration_id: z.string(),
  operations: z.array(operationSchema),
  refunds: z.array(refundSchema),
  name: z.string(),
  amount,
  authorized_amount: amount,
  captured_amount: amount,
  refunded_amount: amount,
  available_amount: amount,
  voided_amount: amount,
  currency: z.string(),
  error_code: nullableText,
  error_message: nullableText,
  gateway_name: z.string(),
  three_d_s_status: nullableText,
  status: z.enum([
    "waiting",
    "pending",
    "authorized",
    "pending-capture",
    "completed",
    "failed",
    "voided",
    "refunded",
    "in-review",
    "blocked",
    "retrieval-request",
    "fraud-notification",
    "chargeback-initiated",
    "solved",
    "reversed",
  ]),
  authorized: z.boolean(),
  captured: z.boolean(),
  voided: z.boolean(),
  refunded: z.boolean(),
  chargedback: z.boolean(),
  auto_capture_at: timestamp.nullable(),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
  payment_method: z.string(),
  native_apm: z.looseObject({ state: z.string() }).nullable(),
  native_apm_response: nativeApmSchema.nullable(),
});

const invoiceObject = z.looseObject({});

export const invoiceSchema = z.strictObject({
  id: id("`iv_…`"),
  project_id: z.string(),
  get project() {
    return projectSchema.optional();
  },
  url: z.string().meta({ description: "The hosted checkout page" }),
  customer_id: nullableText,
  get customer() {
    return customerSchema.nullable().optional();
  },
  transaction_id: nullableText,
  get transaction() {
    return transactionSchema.nullable().optional();
  },
  token_id: nullableText,
  get token() {
    return tokenSchema.nullable().optional();
  },
  subscription_id: nullableText,
  name: z.string(),
  amount,
  currency: z.string(),
  details: z.array(invoiceObject).nullable(),
  risk: invoiceObject,
  device: invoiceObject,
  external_fraud_tools: dictionary,
  shipping: invoiceObject,
  tax: invoiceObject,
  statement_descriptor: nullableText,
  statement_descriptor_phone: nullableText,
  statement_descriptor_city: nullableText,
  statement_descriptor_company: nullableText,
  statement_descriptor_url: nullableText,
  gateway_data: dictionary,
  metadata: dictionary,
  merchant_initiator_type: z.enum(["one-off", "recurring"]).nullable(),
  return_url: nullableText,
  cancel_url: nullableText,
  webhook_url: nullableText,
  require_backend_capture: z.boolean(),
  incremental: z.boolean(),
  sca_exemption_reason: nullableText,
  challenge_indicator: nullableText,
  payment_type: nullableText,
  exemption_reason_3ds2: nullableText,
  card_verification: nullableText,
  sandbox: z.boolean(),
  created_at: timestamp,
});

export const subscriptionSchema = z.strictObject({
  id: id("`sub_…`"),
  project_id: z.string(),
  plan_id: nullableText,
  plan: planSchema.nullable().optional(),
  customer_id: z.string(),
  get customer() {
    return customerSchema.nullable().optional();
  },
  token_id: z.string(),
  get token() {
    return tokenSchema.nullable().optional();
  },
  name: z.string(),
  amount,
  currency: z.string(),
  interval: z.string(),
  trial_end_at: timestamp.nullable(),
  activated: z.boolean(),
  active: z.boolean(),
  cancel_at: timestamp.nullable(),
  canceled: z.boolean(),
  cancellation_reason: nullableText,
  pending_cancellation: z.boolean(),
  activated_at: timestamp.nullable(),
  iterate_at: timestamp.nullable(),
  iterations: z.int(),
  past_due: z.boolean(),
  next_retry_at: timestamp.nullable(),
  failed_attempts: z.int(),
  last_payment_error: z.strictObject({ code: nullableText, message: nullableText }).nullable(),
  next_terms: z.looseObject({}).nullable(),
  metadata: dictionary,
  return_url: nullableText,
  cancel_url: nullableText,
  sandbox: z.boolean(),
  created_at: timestamp,
});

export const eventSchema = z.strictObject({
  id: id("`ev_…`"),
  project_id: z.string(),
  name: z.string().meta({ examples: ["invoice.completed"] }),
  data: z.record(z.string(), z.unknown()).meta({ description: "What the event is about, as presented then" }),
  sandbox: z.boolean(),
  fired_at: timestamp,
});

export const gatewayConfigurationSchema = z.strictObject({
  id: id("`gway_conf_…`"),
  project_id: z.string(),
  gateway: z.looseObject({}).nullable().meta({ description: "Null unless `expand_merchant_accounts=true`" }),
  gateway_id: z.string(),
  gateway_name: z.string(),
  name: nullableText,
  enabled: z.boolean(),
  default_currency: nullableText,
  payment_method: z.enum(["card", "native-apm"]),
  native_apm_config: z.looseObject({ parameters: z.array(nativeApmParameter) }).nullable(),
  settings: z.record(z.string(), z.unknown()),
  created_at: timestamp,
  sandbox: z.boolean(),
});

export const projectSettingsSchema = z.looseObject({
  id: z.string(),
  webhook_url: nullableText,
  webhook_signing_secret: z.string(),
});

export const customerActionSchema = z
  .union([
    z.strictObject({
      type: z.enum(["url", "redirect", "fingerprint", "fingerprint-mobile", "challenge-mobile"]),
      value: z.string(),
      metadata: z.record(z.string(), z.unknown()),
    }),
    z.strictObject({}),
  ])
  .meta({
    description:
      "What the customer must do next (3DS). The private key always gets it, `{}` when nothing; the public key only when there is something to do",
  });

export const errorSchema = z
  .strictObject({
    success: z.literal(false),
    error_type: z.string().meta({ examples: ["request.validation.invalid-amount"] }),
    message: z.string(),
    invalid_fields: z.array(z.strictObject({ name: z.string(), message: z.string() })).optional(),
    request_id: z.string().optional().meta({ description: "Given with an internal error, to quote" }),
  })
  .meta({ description: "Every error: a non-2xx status and this body" });

/** The component name of each schema the document refers to by name. */
export const components = {
  Project: projectSchema,
  Card: cardSchema,
  Plan: planSchema,
  Refund: refundSchema,
  NativeApm: nativeApmSchema,
  Customer: customerSchema,
  Token: tokenSchema,
  Transaction: transactionSchema,
  Invoice: invoiceSchema,
  Subscription: subscriptionSchema,
  Event: eventSchema,
  GatewayConfiguration: gatewayConfigurationSchema,
  ProjectSettings: projectSettingsSchema,
  CustomerAction: customerActionSchema,
  Error: errorSchema,
} as const;
