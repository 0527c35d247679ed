/**
 * The resources as the API presents them, as zod schemas: the response side of the contract. The
 * OpenAPI document (`document.ts`) is generated from them, and a test validates answers recorded
 * from live requests against that document (`test/integration/contract.test.ts`), so a presenter
 * that changes what it shows fails there until its schema here says so.
 *
 * The main resources are strict (no field they do not list); an expandable link is an optional field
 * beside its `_id` (`expand`). Schemas carry their OpenAPI component name in `components`.
 */
import * as z from "../../shared/validation/zod.ts";

const id = (description: string) => z.string().check(z.meta({ description }));
const timestamp = z.iso.datetime({ offset: false }).check(z.meta({ description: "ISO 8601 UTC timestamp" }));
const amount = z
  .string()
  .check(z.meta({ description: "Decimal string in the currency's major unit", examples: ["10.50"] }));
const dictionary = z.record(z.string(), z.string());
const nullableText = z.nullable(z.string());

export const projectSchema = z.strictObject({
  id: id("The environment's project id: `test-proj_…` (sandbox) or `proj_…` (live)"),
  name: z.string(),
  sandbox: z.boolean(),
  created_at: timestamp,
});

export const cardSchema = z.strictObject({
  id: id("`card_…`"),
  project_id: z.string(),
  scheme: z
    .string()
    .check(z.meta({ description: "From the IIN ranges; `unknown` when no scheme holds the number" })),
  co_scheme: nullableText,
  preferred_scheme: nullableText,
  type: z
    .enum(["credit", "debit", "unknown"])
    .check(z.meta({ description: "`unknown` without a BIN table to tell" })),
  bank_name: nullableText,
  brand: nullableText,
  category: nullableText,
  iin: z.string(),
  last_4_digits: z.string(),
  exp_month: z.int(),
  exp_year: z.int(),
  expires_soon: z.boolean().check(z.meta({ description: "The card expires this month or in the next two" })),
  cvc_check: z.enum(["pending", "unavailable", "unknown", "failed", "passed"]),
  avs_check: z.enum(["pending", "unavailable", "unknown", "failed", "passed"]),
  name: nullableText,
  fingerprint: z.string(),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

/**
 * A card changed with `PUT /cards/{id}`: to the public key (a shopper's device) without the holder's
 * name and the fingerprint, and with empty metadata; to the private key the whole card.
 */
export const changedCardSchema = z.extend(cardSchema, {
  name: z.optional(nullableText).check(z.meta({ description: "Absent for the public key" })),
  fingerprint: z.optional(z.string()).check(z.meta({ description: "Absent for the public key" })),
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
  interval: z.string().check(z.meta({ description: "`1d2w3m4y`: days, weeks, months, years" })),
  trial_period: nullableText,
  metadata: dictionary,
  return_url: nullableText,
  cancel_url: nullableText,
  sandbox: z.boolean(),
  created_at: timestamp,
});

export const couponSchema = z.strictObject({
  id: id("Chosen by the merchant"),
  project_id: z.string(),
  amount_off: z.nullable(amount).check(z.meta({ description: "In `currency`; null for a percentage" })),
  percent_off: nullableText.check(
    z.meta({ description: "A percentage above 0 and at most 100, as sent", examples: ["20", "12.5"] }),
  ),
  currency: nullableText.check(z.meta({ description: "The currency of `amount_off`" })),
  iteration_count: z
    .nullable(z.int())
    .check(z.meta({ description: "Billing periods a discount made from it lasts; null: for good" })),
  max_redemptions: z.nullable(z.int()).check(z.meta({ description: "null: no limit" })),
  expires_at: z.nullable(timestamp).check(z.meta({ description: "From then on it cannot be redeemed" })),
  metadata: dictionary,
  redeemed_number: z.int().check(z.meta({ description: "Redemptions so far" })),
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
  reason: z.nullable(z.enum(["customer_request", "duplicate", "fraud"])),
  information: nullableText,
  has_failed: z.boolean(),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
});

const nativeApmParameter = z.looseObject({ key: z.string(), type: z.string(), required: z.boolean() });
export const nativeApmSchema = z.looseObject({
  state: z.nullable(z.string()),
  parameters: z.nullable(z.array(nativeApmParameter)),
  parameterDefinitions: z.nullable(z.array(nativeApmParameter)),
  parameterValues: z.looseObject({ message: nullableText }),
});

/** A link's schema, typed loosely: TypeScript cannot infer mutually recursive getters' types. */
type Link = z.core.$ZodType;

/**
 * Schemas of the resources that link to one another (an invoice's customer, a customer's tokens…),
 * declared with getters: zod resolves them lazily, and the document refers to each by name.
 */
export const customerSchema = z.strictObject({
  id: id("`cust_…`"),
  project_id: z.string(),
  get project(): Link {
    return z.optional(projectSchema);
  },
  default_token_id: nullableText,
  get tokens(): Link {
    return z.nullable(z.array(tokenSchema)).check(z.meta({ description: "Null unless expanded" }));
  },
  get subscriptions(): Link {
    return z.nullable(z.array(subscriptionSchema)).check(z.meta({ description: "Null unless expanded" }));
  },
  get transactions(): Link {
    return z
      .nullable(z.array(transactionSchema))
      .check(z.meta({ description: "Null unless expanded: the customer's 100 most recent, oldest first" }));
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
  get customer(): Link {
    return z.optional(customerSchema);
  },
  gateway_configuration_id: nullableText,
  card: z.nullable(cardSchema),
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

export const routingExplanationSchema = z
  .strictObject({
    decided_by: z.enum(["pinned", "rule", "default"]),
    rule: z.nullable(z.strictObject({ id: z.string(), name: nullableText, position: z.int() })),
    rules_version: z.int(),
    facts: z.strictObject({
      card_scheme: nullableText,
      card_type: nullableText,
      card_country: nullableText,
      country: nullableText,
      initiator: z.enum(["customer", "merchant"]),
    }),
    split: z.nullable(
      z.strictObject({
        weights: z.array(z.strictObject({ gateway_configuration_id: z.string(), weight: z.int() })),
        drawn: nullableText,
      }),
    ),
    chain: z
      .array(z.string())
      .check(z.meta({ description: "The configurations the payment may try, in order" })),
    skipped: z.array(z.strictObject({ gateway_configuration_id: z.string(), reason: z.string() })),
    probing: z
      .array(z.string())
      .check(z.meta({ description: "Half-open breakers tried only as their probe" })),
    max_attempts: z.int(),
    require_three_d_s: z.boolean(),
    blocked: nullableText,
    scheme_rules: z.array(z.string()),
  })
  .check(
    z.meta({ description: "Why a card payment went where it went (routing rules, breakers, scheme rules)" }),
  );

const attemptSchema = z.strictObject({
  reference: z.string(),
  gateway_configuration_id: z.string(),
  gateway_name: z.string(),
  outcome: z.enum(["approved", "declined", "not-done", "customer-action"]),
  error_code: nullableText,
  decline: z.nullable(z.enum(["soft", "hard"])),
  merchant_advice_code: nullableText,
  duration_ms: z.nullable(z.int()),
  cascade: nullableText.check(
    z.meta({ description: "Whether the payment went on to the next configuration, or why not" }),
  ),
  at: timestamp,
  voided_extra_at: z.optional(z.nullable(timestamp)),
});

export const routingRulesSchema = z.strictObject({
  version: z.int(),
  default_order: z.array(z.string()),
  rules: z.array(
    z.looseObject({
      id: z.string(),
      name: nullableText,
      conditions: z.looseObject({}),
      action: z.looseObject({ type: z.string() }),
    }),
  ),
  updated_at: z.nullable(timestamp),
});

export const transactionSchema = z.strictObject({
  id: id("`tr_…`"),
  project_id: z.string(),
  get project(): Link {
    return z.optional(projectSchema);
  },
  invoice_id: z.string(),
  get invoice(): Link {
    return z.optional(z.nullable(invoiceSchema));
  },
  customer_id: nullableText,
  get customer(): Link {
    return z.optional(z.nullable(customerSchema));
  },
  subscription_id: nullableText,
  token_id: nullableText,
  get token(): Link {
    return z.optional(z.nullable(tokenSchema));
  },
  card_id: nullableText,
  card: z.optional(z.nullable(cardSchema)),
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
  auto_capture_at: z.nullable(timestamp),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
  payment_method: z.string(),
  native_apm: z.nullable(z.looseObject({ state: z.string() })),
  native_apm_response: z.nullable(nativeApmSchema),
  attempts: z
    .array(attemptSchema)
    .check(z.meta({ description: "The card payment's provider attempts, in order" })),
  routing: z.nullable(routingExplanationSchema),
  awaiting_gateway: z.nullable(z.strictObject({ operation: z.string(), amount, since: timestamp })).check(
    z.meta({
      description:
        "An operation the gateway received and decides later (Adyen's captures, voids, refunds): its webhook settles it. Null otherwise.",
    }),
  ),
});

const invoiceObject = z.looseObject({});

export const invoiceSchema = z.strictObject({
  id: id("`iv_…`"),
  project_id: z.string(),
  get project(): Link {
    return z.optional(projectSchema);
  },
  url: z.string().check(z.meta({ description: "The hosted checkout page" })),
  customer_id: nullableText,
  get customer(): Link {
    return z.optional(z.nullable(customerSchema));
  },
  transaction_id: nullableText,
  get transaction(): Link {
    return z.optional(z.nullable(transactionSchema));
  },
  token_id: nullableText,
  get token(): Link {
    return z.optional(z.nullable(tokenSchema));
  },
  subscription_id: nullableText,
  name: z.string(),
  amount,
  currency: z.string(),
  details: z.nullable(z.array(invoiceObject)),
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
  merchant_initiator_type: z.nullable(z.enum(["one-off", "recurring"])),
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
  plan: z.optional(z.nullable(planSchema)),
  customer_id: z.string(),
  get customer(): Link {
    return z.optional(z.nullable(customerSchema));
  },
  token_id: z.string(),
  get token(): Link {
    return z.optional(z.nullable(tokenSchema));
  },
  name: z.string(),
  amount,
  currency: z.string(),
  interval: z.string(),
  trial_end_at: z.nullable(timestamp),
  activated: z.boolean(),
  active: z.boolean(),
  cancel_at: z.nullable(timestamp),
  canceled: z.boolean(),
  cancellation_reason: nullableText,
  pending_cancellation: z.boolean(),
  activated_at: z.nullable(timestamp),
  iterate_at: z.nullable(timestamp),
  iterations: z.int(),
  past_due: z.boolean(),
  next_retry_at: z.nullable(timestamp),
  failed_attempts: z.int(),
  last_payment_error: z.nullable(z.strictObject({ code: nullableText, message: nullableText })),
  next_terms: z.nullable(z.looseObject({})),
  current_period_start: z
    .nullable(timestamp)
    .check(z.meta({ description: "The period the last charge paid for; null before any" })),
  current_period_end: z.nullable(timestamp),
  credit_balance: amount.check(z.meta({ description: "Credit carried to the next renewal" })),
  metadata: dictionary,
  return_url: nullableText,
  cancel_url: nullableText,
  sandbox: z.boolean(),
  created_at: timestamp,
});

const signedAmount = z.string().check(
  z.meta({
    description: "Decimal string in the currency's major unit; negative when money went back",
    examples: ["-4.00"],
  }),
);

export const chargeLineSchema = z.strictObject({
  type: z.enum(["plan", "addon", "discount", "proration", "credit"]),
  name: z.string(),
  amount: signedAmount.check(z.meta({ description: "What the line adds (discounts and credits subtract)" })),
  quantity: z.int(),
  unit_amount: signedAmount,
  addon_id: z.optional(z.string()),
  discount_id: z.optional(z.string()),
  coupon_id: z.optional(z.string()),
  period_start: z.optional(timestamp),
  period_end: z.optional(timestamp),
});

export const chargeSchema = z
  .strictObject({
    iteration: z.int(),
    due_at: timestamp,
    period_start: timestamp,
    period_end: timestamp,
    lines: z.array(chargeLineSchema),
    amount: amount.check(z.meta({ description: "What the renewal charges: never below zero" })),
    credit_left: amount.check(z.meta({ description: "Credit carried on to the renewal after" })),
  })
  .check(z.meta({ description: "A renewal's charge, line by line" }));

export const prorationSchema = z
  .strictObject({
    name: z.string(),
    amount: signedAmount,
    from: timestamp,
    to: timestamp,
    addon_id: nullableText,
    created_at: timestamp,
  })
  .check(z.meta({ description: "Charged (or credited, negative) with the next renewal" }));

/** What a change of a subscription's billing answers beside the resource changed. */
export const billingAnswerShape = {
  preview: z.boolean().check(z.meta({ description: "True: nothing was changed" })),
  proration: z.nullable(prorationSchema),
  upcoming_charge: z.nullable(chargeSchema),
};

export const addonSchema = z.strictObject({
  id: id("`addon_…`"),
  project_id: z.string(),
  subscription_id: z.string(),
  plan_id: nullableText,
  type: z.literal("recurring"),
  name: z.string(),
  amount,
  currency: z.string(),
  quantity: z.int(),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const discountSchema = z.strictObject({
  id: id("`disc_…`"),
  project_id: z.string(),
  subscription_id: z.string(),
  coupon_id: nullableText,
  name: nullableText,
  amount: z.nullable(amount),
  percent_off: nullableText,
  currency: z.string(),
  iteration_count: z.nullable(z.int()),
  applied_count: z.int(),
  expires_at: z.nullable(timestamp),
  metadata: dictionary,
  sandbox: z.boolean(),
  created_at: timestamp,
});

export const eventSchema = z.strictObject({
  id: id("`ev_…`"),
  project_id: z.string(),
  name: z.string().check(z.meta({ examples: ["invoice.completed"] })),
  data: z
    .record(z.string(), z.unknown())
    .check(z.meta({ description: "What the event is about, as presented then" })),
  sandbox: z.boolean(),
  fired_at: timestamp,
});

export const gatewayConfigurationSchema = z.strictObject({
  id: id("`gway_conf_…`"),
  project_id: z.string(),
  gateway: z
    .nullable(z.looseObject({}))
    .check(z.meta({ description: "Null unless `expand_merchant_accounts=true`" })),
  gateway_id: z.string(),
  gateway_name: z.string(),
  name: nullableText,
  enabled: z.boolean(),
  default_currency: nullableText,
  currencies: z.nullable(z.array(z.string())),
  payment_method: z.enum(["card", "native-apm"]),
  native_apm_config: z.nullable(z.looseObject({ parameters: z.array(nativeApmParameter) })),
  settings: z.record(z.string(), z.unknown()),
  created_at: timestamp,
  sandbox: z.boolean(),
});

export const projectSettingsSchema = z.looseObject({
  id: z.string(),
  webhook_url: nullableText,
  /** Null for a dashboard session whose role is neither owner nor developer. */
  webhook_signing_secret: nullableText,
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
  .check(
    z.meta({
      description:
        "What the customer must do next (3DS). The private key always gets it, `{}` when nothing; the public key only when there is something to do",
    }),
  );

export const errorSchema = z
  .strictObject({
    success: z.literal(false),
    error_type: z.string().check(z.meta({ examples: ["request.validation.invalid-amount"] })),
    message: z.string(),
    invalid_fields: z.optional(z.array(z.strictObject({ name: z.string(), message: z.string() }))),
    request_id: z
      .optional(z.string())
      .check(z.meta({ description: "Given with an internal error, to quote" })),
  })
  .check(z.meta({ description: "Every error: a non-2xx status and this body" }));

/** The component name of each schema the document refers to by name. */
// API keys
export const apiKeySchema = z.strictObject({
  id: z.string(),
  name: nullableText,
  last4: z.nullable(z.string()).check(
    z.meta({
      description: "The key's last four characters; null for the key the environment was created with",
    }),
  ),
  status: z.enum(["active", "expiring", "expired", "revoked"]),
  created_at: z.string(),
  expires_at: z.nullable(z.string()).check(z.meta({ description: "A rolled key works until then" })),
  revoked_at: nullableText,
});

/** A key as `GET /api-keys` lists it: with when it was last used. */
export const listedApiKeySchema = z.extend(apiKeySchema, {
  last_used_at: z.nullable(z.string()).check(
    z.meta({
      description:
        "When the key last opened a request (recorded at most once per 5 minutes per server instance); null if never since this was recorded",
    }),
  ),
});

// Statistics
const countSchema = z.int().check(z.meta({ description: "Authorization attempts" }));
export const statisticsSchema = z.strictObject({
  interval: z.enum(["hour", "day"]),
  from: z.string().check(z.meta({ description: "The first bucket's start (`from` rounded down, UTC)" })),
  to: z.string().check(z.meta({ description: "The end of the range, exclusive" })),
  series: z.array(
    z.strictObject({
      gateway_configuration_id: z.string(),
      buckets: z.array(
        z.strictObject({
          start: z.string(),
          attempts: countSchema,
          approved: countSchema,
          declined: countSchema,
          failed: countSchema.check(
            z.meta({ description: "Attempts the gateway failed or could not be reached for: nothing moved" }),
          ),
          amounts: z
            .record(z.string(), z.string())
            .check(z.meta({ description: "Approved amounts by currency, exact decimal strings" })),
        }),
      ),
    }),
  ),
});

// The dashboard (shared/dashboard)
const dashboardRole = z.enum(["owner", "developer", "support", "read-only"]);
export const dashboardUserSchema = z.strictObject({
  id: z.string(),
  email: z.string(),
  role: dashboardRole,
  project_id: z.string().check(z.meta({ description: "The root project id (`proj_…`)" })),
  totp_enabled: z.boolean(),
  passkeys: z.int(),
  password_set: z.boolean(),
  created_at: z.string(),
});
export const dashboardSessionSchema = z.strictObject({
  id: z
    .string()
    .check(z.meta({ description: "The session's id (never its secret, which is in the cookie only)" })),
  expires_at: z.string(),
  second_factor: z.enum(["required", "done", "not-enrolled"]),
  csrf_token: z.string().check(z.meta({ description: "Send it in `X-CSRF-Token` with every change" })),
  role: dashboardRole,
  project_id: z.string(),
  environments: z.strictObject({ sandbox: z.string(), live: z.string() }),
});
export const dashboardInvitationSchema = z.strictObject({
  id: z.string(),
  kind: z.enum(["invitation", "sign-in"]),
  email: z.string(),
  role: dashboardRole,
  created_at: z.string(),
  expires_at: z.string(),
});
export const auditEntrySchema = z.strictObject({
  id: z.string(),
  project_id: z.string(),
  actor: z.strictObject({ user_id: nullableText, email: nullableText, role: z.nullable(dashboardRole) }),
  action: z.string(),
  route: nullableText,
  method: nullableText,
  path: nullableText,
  environment: nullableText,
  subject: z.nullable(z.strictObject({ type: z.string(), id: z.string() })),
  ip_address: nullableText,
  user_agent: nullableText,
  request_id: nullableText,
  outcome: z.enum(["started", "succeeded", "failed"]),
  status: z.nullable(z.int()),
  detail: nullableText,
  created_at: z.string(),
  completed_at: nullableText,
});

// Activities
export const activitySchema = z.strictObject({
  id: z.string(),
  project_id: z.string(),
  sandbox: z.boolean(),
  type: z
    .string()
    .check(z.meta({ description: "What changed: `project.updated`, `gateway_configuration.created`, …" })),
  title: z.string(),
  subject: z.nullable(z.strictObject({ type: z.string(), id: z.string() })),
  actor: z.strictObject({
    credential: z.enum(["private-key", "public-key", "supervisor-key", "dashboard", "system"]),
    user: z
      .nullable(z.strictObject({ id: z.string(), email: z.string(), role: z.string() }))
      .check(z.meta({ description: "The person, for a change made through the dashboard" })),
    request_id: nullableText,
    ip_address: nullableText,
    user_agent: nullableText,
  }),
  created_at: z.string(),
});

export const supervisedProjectSchema = z.strictObject({
  id: z.string(),
  supervisor_project_id: nullableText,
  api_version: nullableText,
  name: z.string(),
  logo_url: nullableText,
  email: nullableText,
  default_currency: nullableText,
  private_key: nullableText.check(z.meta({ description: "Only in the answer that creates it, once" })),
  dunning_configuration: z.nullable(
    z.array(z.strictObject({ action: z.enum(["retry", "cancel"]), delay_in_days: z.int() })),
  ),
  applepay_settings: z.nullable(z.record(z.string(), z.string())),
  public_metadata: z.record(z.string(), z.string()),
  sandbox: z.boolean(),
  created_at: z.string(),
});

export const createdSupervisedProjectSchema = z.strictObject({
  ...supervisedProjectSchema.shape,
  sandbox_project: z
    .optional(supervisedProjectSchema)
    .check(z.meta({ description: "A live supervisor's child's sandbox environment, with its key" })),
});

export const applepayCertificateSchema = z.strictObject({
  id: z.string(),
  project_id: z.string(),
  sandbox: z.boolean(),
  status: z.enum(["awaiting_certificate", "active"]),
  csr: z.string().check(z.meta({ description: "The certificate signing request (PEM) to upload to Apple" })),
  public_key_hash: z
    .string()
    .check(z.meta({ description: "base64 SHA-256 of the public key, as a token's `publicKeyHash`" })),
  certificate: nullableText.check(z.meta({ description: "Apple's certificate (PEM), once uploaded" })),
  certificate_expires_at: nullableText,
  created_at: z.string(),
  activated_at: nullableText,
});

const voucherSchema = z.strictObject({
  amount: z.string(),
  currency: z.string(),
  expiry: nullableText.check(z.meta({ description: "The last day it can be spent, `YYYY-MM-DD`" })),
});

export const balancesSchema = z.strictObject({
  vouchers: z.array(voucherSchema).check(z.meta({ description: "What is left on each unexpired voucher" })),
  available_balance: voucherSchema,
  customer_action: z.null().check(z.meta({ description: "Always null: no balance here needs the shopper" })),
});

// Products
export const productSchema = z.strictObject({
  id: id("prod_…"),
  project_id: z.string(),
  url: z
    .string()
    .check(
      z.meta({ description: "The payment link: each visit makes a new invoice and opens its checkout page" }),
    ),
  name: z.string(),
  amount,
  currency: z.string(),
  metadata: dictionary,
  return_url: nullableText,
  cancel_url: nullableText,
  sandbox: z.boolean(),
  created_at: timestamp,
});

// Payouts

export const reconciliationSchema = z
  .strictObject({
    status: z.enum(["matched", "mismatched"]),
    checked_at: timestamp,
    unmatched_items: z
      .int()
      .check(z.meta({ description: "Items whose transaction is unknown or settled another amount" })),
    unpaid_transactions: z.array(z.string()).check(
      z.meta({
        description: "Transactions settled that day through the configuration that no item pays out",
      }),
    ),
  })
  .check(z.meta({ description: "What matching the payout against our transactions found" }));

export const payoutSchema = z.strictObject({
  id: id("`po_…`"),
  project_id: z.string(),
  status: z
    .enum(["paid", "pending", "in_transit", "canceled", "failed"])
    .check(z.meta({ description: "The sandbox gateway's are `paid`; a provider's as it reports" })),
  amount: signedAmount,
  currency: z.string(),
  metadata: dictionary,
  bank_name: nullableText,
  bank_summary: nullableText,
  sales_transactions: z.int(),
  sales_volume: amount,
  refunds_transactions: z.int(),
  refunds_volume: amount,
  chargebacks_transactions: z.int(),
  chargebacks_volume: amount,
  fees: amount,
  adjustments: signedAmount,
  reserve: amount,
  settled_at: timestamp,
  created_at: timestamp,
  gateway_configuration_id: z.string().check(z.meta({ description: "The configuration that paid it out" })),
  gateway_resource_id: z
    .string()
    .check(
      z.meta({ description: "The provider's id of the payout (`sandbox-payout-<day>` for the sandbox's)" }),
    ),
  reconciliation: reconciliationSchema,
});

export const payoutItemSchema = z.strictObject({
  id: id("`poi_…`"),
  project_id: z.string(),
  payout_id: z.string(),
  transaction_id: nullableText,
  type: z.enum(["sale", "refund", "chargeback", "adjustment", "fee", "other"]),
  gateway_resource_id: nullableText,
  amount: signedAmount,
  fees: amount,
  metadata: dictionary,
  created_at: timestamp,
  breakdown: z.strictObject({
    scheme_fee: amount,
    interchange_fee: amount,
    gateway_fee: amount,
    markup_fee: amount,
    acquirer_fee: amount,
    other_fee: amount,
  }),
  reconciled: z.boolean().check(z.meta({ description: "Whether it matches what its transaction settled" })),
  mismatch: nullableText.check(z.meta({ description: "Why it does not match, when it does not" })),
});

// Exports
const layoutConfigurationSchema = z.strictObject({
  columns: z.array(
    z.strictObject({
      name: z.string(),
      rename: z.nullable(z.string()).check(z.meta({ description: "The column's header; null: its name" })),
    }),
  ),
  time: z.strictObject({ format: z.string() }),
  amount: z.strictObject({
    precision: z.nullable(z.int()).check(z.meta({ description: "Decimals; null: the currency's own" })),
    separator: z.enum([".", ","]),
  }),
});

export const exportLayoutSchema = z.strictObject({
  id: z.nullable(id("`exp_lay_…`; null for the built-in layout")),
  project_id: z.string(),
  name: z.string(),
  type: z.enum(["transactions", "payouts", "payout_items"]),
  is_default: z.boolean().check(z.meta({ description: "The layout automatic exports of its type use" })),
  configuration: layoutConfigurationSchema,
  sandbox: z.boolean(),
  created_at: z.nullable(timestamp),
});

export const exportLayoutOptionsSchema = z.strictObject({
  columns: z.array(z.string()),
  time: z.strictObject({ format: z.array(z.string()) }),
  amount: z.strictObject({ precision: z.array(z.int()), separator: z.array(z.string()) }),
});

export const exportSchema = z.strictObject({
  id: id("`exp_…`"),
  project_id: z.string(),
  type: z.enum(["transactions", "payouts", "payout_items"]),
  layout_id: nullableText,
  from: timestamp,
  to: timestamp,
  automatic: z.boolean().check(z.meta({ description: "A daily export of the default layout" })),
  status: z.enum(["pending", "running", "completed", "failed"]),
  rows: z.nullable(z.int()),
  size: z.nullable(z.int().check(z.meta({ description: "Bytes" }))),
  file_name: z.string(),
  location: nullableText.check(z.meta({ description: "Where the file is: `s3://…` or a local path" })),
  error: nullableText,
  delivery: z.nullable(
    z.strictObject({
      status: z.enum(["delivered", "failed"]),
      remote_path: z.string(),
      host_key_fingerprint: nullableText,
      error: nullableText,
      at: timestamp,
    }),
  ),
  sandbox: z.boolean(),
  created_at: timestamp,
  completed_at: z.nullable(timestamp),
});

export const sftpSettingsSchema = z.strictObject({
  enabled: z.boolean(),
  endpoint: nullableText.check(z.meta({ description: "host:port" })),
  username: nullableText,
  authentication: z.nullable(z.enum(["password", "private_key"])),
  host_key_fingerprint: nullableText.check(
    z.meta({ description: "`SHA256:…` of the server's host key, pinned on the first delivery" }),
  ),
  last_error: nullableText,
});

export const components = {
  Project: projectSchema,
  Card: cardSchema,
  Plan: planSchema,
  Coupon: couponSchema,
  Refund: refundSchema,
  NativeApm: nativeApmSchema,
  Customer: customerSchema,
  Token: tokenSchema,
  Transaction: transactionSchema,
  Invoice: invoiceSchema,
  Subscription: subscriptionSchema,
  SubscriptionAddon: addonSchema,
  SubscriptionDiscount: discountSchema,
  SubscriptionCharge: chargeSchema,
  Event: eventSchema,
  GatewayConfiguration: gatewayConfigurationSchema,
  RoutingRules: routingRulesSchema,
  RoutingExplanation: routingExplanationSchema,
  ProjectSettings: projectSettingsSchema,
  CustomerAction: customerActionSchema,
  Error: errorSchema,
  Activity: activitySchema,
  ApiKey: apiKeySchema,
  DashboardUser: dashboardUserSchema,
  DashboardSession: dashboardSessionSchema,
  DashboardInvitation: dashboardInvitationSchema,
  AuditEntry: auditEntrySchema,
  Statistics: statisticsSchema,
  Balances: balancesSchema,
  ApplePayCertificate: applepayCertificateSchema,
  SupervisedProject: supervisedProjectSchema,
  // Products
  Product: productSchema,
  // Payouts
  Payout: payoutSchema,
  PayoutItem: payoutItemSchema,
  // Exports
  ExportLayout: exportLayoutSchema,
  Export: exportSchema,
  SftpSettings: sftpSettingsSchema,
} as const;
