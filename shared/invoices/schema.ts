import type { InvalidField } from "../http/errors.ts";
import {
  amount,
  amountProblem,
  amountProblemIn,
  compareAmounts,
  optionalAmount,
  paymentAmount,
} from "../money.ts";
import {
  booleanField,
  choice,
  countryCode,
  currency,
  type DictionaryLimits,
  dictionary,
  httpUrl,
  integerField,
  ipAddress,
  metadata,
  phoneNumber,
  requiredText,
  text,
  timestamp,
} from "../validation/fields.ts";
import * as z from "../validation/zod.ts";
import { webhookUrl } from "../webhooks/url-field.ts";

/**
 * The input rules of an invoice (spec: Invoice, InvoiceDetail, InvoiceRisk, InvoiceDevice,
 * InvoiceShipping, InvoiceTax, InvoiceExternalFraudTools, Metadata, Limits). Form and JSON bodies
 * both arrive here as objects. Unknown keys are dropped (client libraries send keys this service
 * does not know, `null` when unset); read-only fields (`id`, `details[].id`, `sandbox`, …) are
 * unknown keys here, so a client echoing them back is not refused.
 */
export const INVOICE_LIMITS = {
  name: 80,
  statementDescriptor: 22,
  /** Not in the spec: a bound so that one invoice always fits one table item (see `storedBytes`). */
  details: 100,
  /** Fields the spec gives no limit (statement descriptor phone, city, company; marketplace merchant). */
  freeText: 255,
  deviceId: 100,
  riskScore: 12,
  /**
   * The JSON of a stored invoice. A DynamoDB item holds 400 KB, and the answer stored for an
   * `Idempotency-Key` (the same invoice again) is a second item of the same transaction.
   */
  storedBytes: 256 * 1024,
} as const;

/** Not in the spec: the same shape as metadata, with room for longer gateway-specific values. */
export const GATEWAY_DATA_LIMITS: DictionaryLimits = { pairs: 50, keyLength: 100, valueLength: 2000 };
/** Not in the spec: one entry per fraud tool, each holding what is forwarded to it. */
export const EXTERNAL_FRAUD_TOOLS_LIMITS: DictionaryLimits = { pairs: 20, keyLength: 100, valueLength: 2000 };

export const DETAIL_CATEGORIES = [
  "food",
  "entertainment",
  "home",
  "appliance",
  "bidding",
  "gift",
  "technology",
  "media",
  "communication",
  "health",
  "sport",
  "personal-service",
  "professional-service",
  "clothing",
  "travel",
  "transport",
  "other",
] as const;
export const DETAIL_CONDITIONS = ["new", "refurbished", "used", "other"] as const;
export const SHIPPING_METHODS = [
  "web",
  "collect-at-shop",
  "relay",
  "travel-station",
  "home",
  "shipping",
  "locker",
  "other",
] as const;
export const SHIPPING_DELAYS = ["express", "priority", "standard", "other"] as const;
export const DEVICE_CHANNELS = ["web", "ios", "android", "other"] as const;
export const MERCHANT_INITIATOR_TYPES = ["one-off", "recurring"] as const;
export const SCA_EXEMPTION_REASONS = [
  "low-value",
  "trusted-beneficiary",
  "transaction-risk-analysis",
] as const;
export const CHALLENGE_INDICATORS = [
  "no-preference",
  "no-challenge-requested",
  "challenge-requested",
  "challenge-requested-mandate",
  "no-challenge-requested-tra-performed",
  "no-challenge-requested-data-share-only",
  "no-challenge-requested-sca-performed",
  "no-challenge-requested-whitelist-exemption",
  "challenge-requested-whitelist-prompt",
  "cb-scoring",
] as const;
export const PAYMENT_TYPES = ["moto", "ecommerce"] as const;

/** Metadata keys the service reads: each holds a zero or positive number (taxes or shipping included). */
export const RESERVED_METADATA_KEYS = ["taxes_amount", "shipping_amount"] as const;

const blankIsNull = (value: unknown) => (value === "" ? null : value);

/** An optional boolean; `""` → null (unset). */
const optionalBoolean = z.preprocess(blankIsNull, z.nullable(booleanField));

/** An id of a linked resource; whether it names one is decided by the write (a 404 when not). */
const linkId = text(255);

export const STATEMENT_DESCRIPTOR_PATTERN = /^[A-Za-z0-9 ./]*$/;

const statementDescriptor = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z
        .string("must be a string")
        .check(
          z.maxLength(
            INVOICE_LIMITS.statementDescriptor,
            `must be at most ${INVOICE_LIMITS.statementDescriptor} characters`,
          ),
          z.regex(
            STATEMENT_DESCRIPTOR_PATTERN,
            "may hold only letters, digits, spaces, dots and forward slashes",
          ),
        ),
    ),
  ),
);

/** A percentage from 0 to 100 as a decimal string ("20", "5.5"); kept as sent. */
const percentage = z.preprocess(
  blankIsNull,
  z.optional(
    z.nullable(
      z.string("must be a percentage from 0 to 100").check(
        z.refine((value) => amountProblem(value) === undefined && compareAmounts(value, "100") <= 0, {
          message: "must be a percentage from 0 to 100, such as 20 or 5.5",
        }),
      ),
    ),
  ),
);

/** An integer of at least 1; `""` → absent (the default, 1). */
const quantity = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z.optional(integerField.check(z.refine((value) => value >= 1, { message: "must be at least 1" }))),
);

/**
 * Form bodies carry lists as indexed keys (`details[0][name]`); past its array limit the form
 * parser hands them over as an object keyed by index. Both are the same list.
 */
function indexedObjectAsList(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (entries.length === 0 || !entries.every(([key]) => /^(0|[1-9][0-9]{0,5})$/.test(key))) return value;
  return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, item]) => item);
}

const invoiceMetadata = metadata.check(
  z.superRefine((pairs, ctx) => {
    for (const key of RESERVED_METADATA_KEYS) {
      const value = pairs?.[key];
      if (value !== undefined && amountProblem(value) !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "must be a zero or positive number, such as 10.50",
        });
      }
    }
  }),
);

const detail = z.object(
  {
    name: requiredText(INVOICE_LIMITS.name),
    type: text(30),
    amount,
    quantity,
    metadata,
    category: choice(DETAIL_CATEGORIES),
    reference: text(255),
    description: text(255),
    brand: text(80),
    model: text(80),
    discount_amount: optionalAmount,
    condition: choice(DETAIL_CONDITIONS),
    marketplace_merchant: text(INVOICE_LIMITS.freeText),
    marketplace_merchant_is_business: optionalBoolean,
    marketplace_merchant_created_at: timestamp,
  },
  "must be an object",
);

const details = z.preprocess(
  (value) => (value === "" ? null : indexedObjectAsList(value)),
  z.optional(
    z.nullable(
      z
        .array(detail, "must be a list of items")
        .check(z.maxLength(INVOICE_LIMITS.details, `must hold at most ${INVOICE_LIMITS.details} items`)),
    ),
  ),
);

const risk = z.optional(
  z.object(
    {
      score: text(INVOICE_LIMITS.riskScore),
      is_legit: optionalBoolean,
      skip_gateway_rules: optionalBoolean,
    },
    "must be an object",
  ),
);

const device = z.optional(
  z.object(
    {
      id: text(INVOICE_LIMITS.deviceId),
      channel: choice(DEVICE_CHANNELS),
      ip_address: ipAddress,
    },
    "must be an object",
  ),
);

const shipping = z.optional(
  z.object(
    {
      amount: optionalAmount,
      method: choice(SHIPPING_METHODS),
      provider: text(32),
      delay: choice(SHIPPING_DELAYS),
      address1: text(255),
      address2: text(255),
      state: text(80),
      city: text(80),
      country_code: countryCode,
      zip: text(16),
      phone_number: phoneNumber,
      expects_shipping_at: timestamp,
      relay_store_name: text(100),
    },
    "must be an object",
  ),
);

const tax = z.optional(z.object({ amount: optionalAmount, rate: percentage }, "must be an object"));

const invoiceFields = {
  name: requiredText(INVOICE_LIMITS.name),
  amount: paymentAmount,
  currency,
  customer_id: linkId,
  token_id: linkId,
  details,
  risk,
  device,
  external_fraud_tools: dictionary(EXTERNAL_FRAUD_TOOLS_LIMITS),
  shipping,
  tax,
  statement_descriptor: statementDescriptor,
  statement_descriptor_phone: text(INVOICE_LIMITS.freeText),
  statement_descriptor_city: text(INVOICE_LIMITS.freeText),
  statement_descriptor_company: text(INVOICE_LIMITS.freeText),
  statement_descriptor_url: httpUrl,
  gateway_data: dictionary(GATEWAY_DATA_LIMITS),
  merchant_initiator_type: choice(MERCHANT_INITIATOR_TYPES),
  return_url: httpUrl,
  cancel_url: httpUrl,
  webhook_url: webhookUrl,
  metadata: invoiceMetadata,
  sca_exemption_reason: choice(SCA_EXEMPTION_REASONS),
  challenge_indicator: choice(CHALLENGE_INDICATORS),
  payment_type: choice(PAYMENT_TYPES),
};

/** `POST /invoices`: `name`, `amount` and `currency` are required. */
export const createInvoiceInput = z.object(invoiceFields);

/**
 * `PUT /invoices/{id}`: the same rules, every field optional; only the fields sent change. The
 * required fields cannot be cleared.
 */
export const updateInvoiceInput = z.object({
  ...invoiceFields,
  name: z.optional(invoiceFields.name),
  amount: z.optional(invoiceFields.amount),
  currency: z.optional(invoiceFields.currency),
});

export type InvoiceInput = z.output<typeof createInvoiceInput>;
export type InvoiceChanges = z.output<typeof updateInvoiceInput>;
export type DetailInput = z.output<typeof detail>;

/** What the rules between fields need to know of an invoice: its currency and its amounts. */
export interface PricedInvoice {
  amount: string;
  currency: string;
  details: readonly { amount: string; discount_amount: string | null }[] | null;
  shipping: { amount: string | null };
  tax: { amount: string | null };
}

/** Every amount of an invoice by its field path, each to be written with the invoice's currency. */
export function amountsOf(invoice: PricedInvoice): { path: string; amount: string }[] {
  const amounts = [{ path: "amount", amount: invoice.amount }];
  invoice.details?.forEach((item, index) => {
    amounts.push({ path: `details[${index}].amount`, amount: item.amount });
    if (item.discount_amount !== null) {
      amounts.push({ path: `details[${index}].discount_amount`, amount: item.discount_amount });
    }
  });
  if (invoice.shipping.amount !== null)
    amounts.push({ path: "shipping.amount", amount: invoice.shipping.amount });
  if (invoice.tax.amount !== null) amounts.push({ path: "tax.amount", amount: invoice.tax.amount });
  return amounts;
}

/** The amounts with more decimals than the invoice's currency allows (`details[1].amount` …). */
export function amountsNotInCurrency(invoice: PricedInvoice): InvalidField[] {
  return amountsOf(invoice).flatMap(({ path, amount: value }) => {
    const problem = amountProblemIn(value, invoice.currency);
    return problem ? [{ name: path, message: problem }] : [];
  });
}

/** The top-level field holding most of an invoice that is too large to store, or undefined. */
export function oversizedField(invoice: Record<string, unknown>): InvalidField | undefined {
  const size = Buffer.byteLength(JSON.stringify(invoice));
  if (size <= INVOICE_LIMITS.storedBytes) return undefined;
  const [largest = "details"] = Object.entries(invoice)
    .map(([name, value]) => [name, Buffer.byteLength(JSON.stringify(value ?? null))] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([name]) => name);
  return {
    name: largest,
    message: `makes the invoice larger than ${INVOICE_LIMITS.storedBytes / 1024} KB; send less data`,
  };
}
