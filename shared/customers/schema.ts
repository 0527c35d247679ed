import {
  booleanField,
  calendarDate,
  countryCode,
  currency,
  email,
  metadata,
  phoneNumber,
  text,
} from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/** The fields a merchant can set on a customer. All optional: a customer may be created empty. */
const customerFields = {
  email,
  first_name: text(100),
  last_name: text(100),
  address1: text(255),
  address2: text(255),
  city: text(80),
  state: text(80),
  zip: text(16),
  country_code: countryCode,
  phone_number: phoneNumber,
  legal_document: text(255),
  is_business: booleanField,
  date_of_birth: calendarDate,
  /** Set at most once: by the merchant, or by the first invoice the customer pays. */
  currency: z.preprocess((value) => (value === "" ? undefined : value), z.optional(currency)),
  metadata,
};

export const createCustomerInput = z.object(customerFields);
export const updateCustomerInput = z.object(customerFields);

export type CustomerFields = z.output<typeof createCustomerInput>;
export const CUSTOMER_FIELD_NAMES = Object.keys(customerFields) as (keyof CustomerFields)[];
