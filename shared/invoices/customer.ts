import { getCustomer } from "../customers/service.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, invalidField } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { changeInvoice, getInvoice } from "./service.ts";

/**
 * An invoice's customer, as the client libraries read and set it (`/invoices/{id}/customers`). Setting
 * it is the invoice's own change (`changeInvoice`): only before a payment is attempted, the customer
 * checked in the same write.
 */

/** `GET /invoices/{id}/customers` */
export async function customerOfInvoice(caller: Caller, invoiceId: string) {
  const invoice = await getInvoice(caller, invoiceId);
  if (invoice.customer_id === null) {
    throw new ApiError(
      404,
      "resource.customer.not-found",
      `Invoice ${invoice.id} has no customer: set one with POST /invoices/${invoice.id}/customers.`,
    );
  }
  return getCustomer(caller, invoice.customer_id);
}

/** `POST /invoices/{id}/customers` with `customer_id` */
export async function assignCustomer(caller: Caller, invoiceId: string, body: Record<string, unknown>) {
  const customerId = body.customer_id;
  if (customerId === undefined || customerId === null || customerId === "") {
    throw invalidField("customer_id", "is required");
  }
  if (typeof customerId !== "string") throw invalidField("customer_id", "must be a string");
  if (!isId("customer", customerId)) throw invalidField("customer_id", "must be a customer id (cust_…)");
  await changeInvoice(caller, invoiceId, { customer_id: customerId });
  return getCustomer(caller, customerId);
}
