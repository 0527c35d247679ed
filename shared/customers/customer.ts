import type { Caller } from "../http/auth.ts";
import { newId } from "../ids.ts";
import { CUSTOMER_FIELD_NAMES, type CustomerFields } from "./schema.ts";

/**
 * A customer has at most this many tokens, so that deleting it deletes every token and records every
 * event in one transaction (at most 100 writes: 2 per token, 5 for the customer).
 */
export const MAX_TOKENS_PER_CUSTOMER = 40;

/** A customer as stored: every settable field (null when unset) plus what the service sets. */
export interface Customer {
  id: string;
  project_id: string;
  sandbox: boolean;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  address1: string | null;
  address2: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country_code: string | null;
  phone_number: string | null;
  legal_document: string | null;
  is_business: boolean;
  date_of_birth: string | null;
  currency: string | null;
  metadata: Record<string, string>;
  /** The token payments use when none is named: the customer's first token, until it is deleted. */
  default_token_id: string | null;
  /** Tokens the customer has, kept by every token creation and deletion (at most `MAX_TOKENS_PER_CUSTOMER`). */
  token_count: number;
  created_at: string;
  updated_at: string;
}

export function newCustomer(caller: Caller, fields: CustomerFields, now: Date): Customer {
  const at = now.toISOString();
  return {
    id: newId("customer"),
    project_id: caller.projectId,
    sandbox: caller.sandbox,
    email: fields.email ?? null,
    first_name: fields.first_name ?? null,
    last_name: fields.last_name ?? null,
    address1: fields.address1 ?? null,
    address2: fields.address2 ?? null,
    city: fields.city ?? null,
    state: fields.state ?? null,
    zip: fields.zip ?? null,
    country_code: fields.country_code ?? null,
    phone_number: fields.phone_number ?? null,
    legal_document: fields.legal_document ?? null,
    is_business: fields.is_business ?? false,
    date_of_birth: fields.date_of_birth ?? null,
    currency: fields.currency ?? null,
    metadata: fields.metadata ?? {},
    default_token_id: null,
    token_count: 0,
    created_at: at,
    updated_at: at,
  };
}

/** The customer with the changes applied, as of `now`. */
export function withChanges(customer: Customer, changes: Partial<CustomerFields>, now: Date): Customer {
  return { ...customer, ...changes, updated_at: now.toISOString() } as Customer;
}

/** Only the fields the merchant actually sent: `undefined` leaves a field as it is, `null` clears it. */
export function customerChanges(fields: CustomerFields): Partial<CustomerFields> {
  const changes: Partial<CustomerFields> = {};
  for (const name of CUSTOMER_FIELD_NAMES) {
    if (fields[name] !== undefined) Object.assign(changes, { [name]: fields[name] });
  }
  return changes;
}

/**
 * The customer resource as the API returns it. Its lists (`tokens`, `subscriptions`,
 * `transactions`) are null unless expanded (`shared/expansion`).
 */
export function presentCustomer(customer: Customer) {
  return {
    id: customer.id,
    project_id: customer.project_id,
    default_token_id: customer.default_token_id,
    tokens: null,
    subscriptions: null,
    transactions: null,
    balance: "0",
    currency: customer.currency,
    email: customer.email,
    first_name: customer.first_name,
    last_name: customer.last_name,
    address1: customer.address1,
    address2: customer.address2,
    city: customer.city,
    state: customer.state,
    zip: customer.zip,
    country_code: customer.country_code,
    phone_number: customer.phone_number,
    legal_document: customer.legal_document,
    is_business: customer.is_business,
    date_of_birth: customer.date_of_birth,
    metadata: customer.metadata,
    sandbox: customer.sandbox,
    created_at: customer.created_at,
    updated_at: customer.updated_at,
  };
}
