import { checkoutLink, newCheckoutKey } from "../checkout/link.ts";
import type { Caller } from "../http/auth.ts";
import { newId } from "../ids.ts";
import type { DetailInput, InvoiceChanges, InvoiceInput } from "./schema.ts";

/** Every field of `T` present, `null` when unset (the stored form of an input shape). */
type Settled<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

type SubObject<K extends keyof InvoiceChanges> = NonNullable<InvoiceChanges[K]>;

export type InvoiceDetail = Settled<DetailInput> & {
  /** Read-only: assigned when the detail is stored. */
  id: string;
  quantity: number;
  metadata: Record<string, string>;
};
export type InvoiceRisk = Settled<SubObject<"risk">>;
export type InvoiceDevice = Settled<SubObject<"device">> & {
  channel: NonNullable<SubObject<"device">["channel"]>;
};
export type InvoiceShipping = Settled<SubObject<"shipping">> & { amount: string };
export type InvoiceTax = Settled<SubObject<"tax">>;

type Dictionary = Record<string, string>;
type StructuredFields =
  | "details"
  | "risk"
  | "device"
  | "shipping"
  | "tax"
  | "metadata"
  | "gateway_data"
  | "external_fraud_tools";

/**
 * An invoice as stored: every field the merchant can set (null when unset) plus what the service
 * sets. Amounts are the strings the merchant sent.
 */
export type Invoice = Settled<Omit<InvoiceInput, StructuredFields>> & {
  id: string;
  project_id: string;
  sandbox: boolean;
  details: InvoiceDetail[] | null;
  risk: InvoiceRisk;
  device: InvoiceDevice;
  shipping: InvoiceShipping;
  tax: InvoiceTax;
  metadata: Dictionary;
  gateway_data: Dictionary;
  external_fraud_tools: Dictionary;
  /** Set by the first payment attempt (authorize or capture); from then on the invoice is frozen. */
  transaction_id: string | null;
  /** Set on the invoices a subscription issues. */
  subscription_id: string | null;
  require_backend_capture: boolean;
  incremental: boolean;
  /** Set by 3DS2 authentication and card verification; their shapes are not specified yet. */
  exemption_reason_3ds2: string | null;
  card_verification: string | null;
  created_at: string;
  /**
   * The secret of the invoice's checkout link (`shared/checkout/link.ts`), shown only inside `url`.
   * Invoices made before links had keys have none.
   */
  checkout_key?: string;
};

/** The fields a merchant sets, at the top level of an invoice. */
export type SettableField = keyof InvoiceChanges;

const DEFAULT_DEVICE_CHANNEL = "web";
const DEFAULT_SHIPPING_AMOUNT = "0";

export function newInvoice(caller: Caller, input: InvoiceInput, now: Date): Invoice {
  const blank: Invoice = {
    id: newId("invoice"),
    project_id: caller.projectId,
    customer_id: null,
    transaction_id: null,
    token_id: null,
    subscription_id: null,
    name: input.name,
    amount: input.amount,
    currency: input.currency,
    details: null,
    risk: { score: null, is_legit: null, skip_gateway_rules: null },
    device: { id: null, channel: DEFAULT_DEVICE_CHANNEL, ip_address: null },
    external_fraud_tools: {},
    shipping: {
      amount: DEFAULT_SHIPPING_AMOUNT,
      method: null,
      provider: null,
      delay: null,
      address1: null,
      address2: null,
      state: null,
      city: null,
      country_code: null,
      zip: null,
      phone_number: null,
      expects_shipping_at: null,
      relay_store_name: null,
    },
    tax: { amount: null, rate: null },
    statement_descriptor: null,
    statement_descriptor_phone: null,
    statement_descriptor_city: null,
    statement_descriptor_company: null,
    statement_descriptor_url: null,
    gateway_data: {},
    merchant_initiator_type: null,
    return_url: null,
    cancel_url: null,
    webhook_url: null,
    require_backend_capture: false,
    incremental: false,
    metadata: {},
    sca_exemption_reason: null,
    challenge_indicator: null,
    payment_type: null,
    exemption_reason_3ds2: null,
    card_verification: null,
    sandbox: caller.sandbox,
    created_at: now.toISOString(),
    checkout_key: newCheckoutKey(),
  };
  return withChanges(blank, input);
}

/**
 * The invoice with the fields a request sent. A field not sent stays; `""` (null after parsing)
 * clears it. Sub-objects change field by field (`shipping.city` alone leaves the address); a
 * dictionary or the `details` list sent is the new one as a whole, and new details get new ids.
 * Cleared defaults come back: `shipping.amount` to "0", `device.channel` to "web".
 */
export function withChanges(invoice: Invoice, changes: InvoiceChanges): Invoice {
  const { details, risk, device, shipping, tax, metadata, gateway_data, external_fraud_tools, ...scalars } =
    changes;
  const next: Invoice = { ...invoice, ...sentOnly(scalars) };
  if (details !== undefined) next.details = details === null ? null : details.map(newDetail);
  next.risk = merged(invoice.risk, risk);
  const nextDevice = merged(invoice.device, device);
  next.device = { ...nextDevice, channel: nextDevice.channel ?? DEFAULT_DEVICE_CHANNEL };
  const nextShipping = merged(invoice.shipping, shipping);
  next.shipping = { ...nextShipping, amount: nextShipping.amount ?? DEFAULT_SHIPPING_AMOUNT };
  next.tax = merged(invoice.tax, tax);
  if (metadata !== undefined) next.metadata = metadata;
  if (gateway_data !== undefined) next.gateway_data = gateway_data;
  if (external_fraud_tools !== undefined) next.external_fraud_tools = external_fraud_tools;
  return next;
}

function newDetail(input: DetailInput): InvoiceDetail {
  const blank: Settled<DetailInput> = {
    name: input.name,
    type: null,
    amount: input.amount,
    quantity: 1,
    metadata: {},
    category: null,
    reference: null,
    description: null,
    brand: null,
    model: null,
    discount_amount: null,
    condition: null,
    marketplace_merchant: null,
    marketplace_merchant_is_business: null,
    marketplace_merchant_created_at: null,
  };
  return { id: newId("invoiceDetail"), ...merged(blank, input) };
}

/** The fields of `changes` that were sent (an `undefined` field was not). */
function sentOnly<T extends object>(changes: T): Partial<Settled<T>> {
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<
    Settled<T>
  >;
}

function merged<T extends object>(current: Settled<T>, changes: T | undefined): Settled<T> {
  return changes === undefined ? current : { ...current, ...sentOnly(changes) };
}

/** The invoice resource as the API returns it; links are ids (expanded by `shared/expansion`). */
export function presentInvoice(invoice: Invoice) {
  return {
    id: invoice.id,
    project_id: invoice.project_id,
    url: checkoutLink(invoice),
    customer_id: invoice.customer_id,
    transaction_id: invoice.transaction_id,
    token_id: invoice.token_id,
    subscription_id: invoice.subscription_id,
    name: invoice.name,
    amount: invoice.amount,
    currency: invoice.currency,
    details: invoice.details,
    risk: invoice.risk,
    device: invoice.device,
    external_fraud_tools: invoice.external_fraud_tools,
    shipping: invoice.shipping,
    tax: invoice.tax,
    statement_descriptor: invoice.statement_descriptor,
    statement_descriptor_phone: invoice.statement_descriptor_phone,
    statement_descriptor_city: invoice.statement_descriptor_city,
    statement_descriptor_company: invoice.statement_descriptor_company,
    statement_descriptor_url: invoice.statement_descriptor_url,
    gateway_data: invoice.gateway_data,
    metadata: invoice.metadata,
    merchant_initiator_type: invoice.merchant_initiator_type,
    return_url: invoice.return_url,
    cancel_url: invoice.cancel_url,
    webhook_url: invoice.webhook_url,
    require_backend_capture: invoice.require_backend_capture,
    incremental: invoice.incremental,
    sca_exemption_reason: invoice.sca_exemption_reason,
    challenge_indicator: invoice.challenge_indicator,
    payment_type: invoice.payment_type,
    exemption_reason_3ds2: invoice.exemption_reason_3ds2,
    card_verification: invoice.card_verification,
    sandbox: invoice.sandbox,
    created_at: invoice.created_at,
  };
}

export type PresentedInvoice = ReturnType<typeof presentInvoice>;
