import type { PageRequest } from "../db/listing.ts";
import type { TransactItem } from "../db/transactions.ts";
import { eventWrite, eventWrites } from "../events/event.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, busy, notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { presentTokens } from "../tokens/present.ts";
import { tokenDelete, tokenFromItem } from "../tokens/store.ts";
import type { PresentedToken } from "../tokens/token.ts";
import { parseInput } from "../validation/parse.ts";
import { customerChanges, newCustomer, presentCustomer, withChanges } from "./customer.ts";
import { createCustomerInput, updateCustomerInput } from "./schema.ts";
import {
  deleteCustomer,
  findCustomer,
  findCustomerWithTokens,
  findVersionedCustomer,
  insertCustomer,
  listCustomers,
  updateCustomer,
} from "./store.ts";

/**
 * Validates and builds a new customer; `commit` receives the presented customer and returns the
 * writes that must commit with it (the stored answer of an idempotent request).
 */
export async function createCustomer(
  caller: Caller,
  input: unknown,
  commit: (presented: ReturnType<typeof presentCustomer>) => TransactItem[],
  now = new Date(),
) {
  const customer = newCustomer(caller, parseInput(createCustomerInput, input), now);
  const presented = presentCustomer(customer);
  await insertCustomer(customer, [
    ...eventWrite(caller.projectId, "customer.created", { customer: presented }, now),
    ...commit(presented),
  ]);
  return presented;
}

export async function getCustomer(caller: Caller, id: string) {
  const customer = isId("customer", id) ? await findCustomer(caller.projectId, id) : undefined;
  if (!customer) throw notFound("customer", id);
  return presentCustomer(customer);
}

/** Attempts of a change that keeps meeting a concurrent change of the same customer. */
const WRITE_ATTEMPTS = 3;

const concurrentChange = (id: string) =>
  busy("request.customer.concurrent-update", `Customer ${id} is being changed by another request.`);

/**
 * Changes the fields sent. The customer is read, changed and checked (its currency is immutable once
 * set), then written on the condition that it is still the version read, with its
 * `customer.updated` event; a concurrent change makes it start over.
 */
export async function changeCustomer(caller: Caller, id: string, input: unknown, now = new Date()) {
  const changes = customerChanges(parseInput(updateCustomerInput, input));
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const current = isId("customer", id) ? await findVersionedCustomer(caller.projectId, id) : undefined;
    if (!current) throw notFound("customer", id);
    const currency = current.customer.currency;
    if (changes.currency && currency !== null && changes.currency !== currency) {
      throw new ApiError(
        400,
        "request.validation.currency-immutable",
        "A customer's currency cannot change once set.",
        [{ name: "currency", message: `is already ${currency} and cannot change` }],
      );
    }
    const presented = presentCustomer(withChanges(current.customer, changes, now));
    const outcome = await updateCustomer(
      current,
      changes,
      now,
      eventWrite(caller.projectId, "customer.updated", { customer: presented }, now),
    );
    if (outcome === "updated") return presented;
    if (outcome === "not-found") throw notFound("customer", id);
  }
  throw concurrentChange(id);
}

/**
 * Deletes a customer with all its tokens (a customer has at most `MAX_TOKENS_PER_CUSTOMER`), and
 * records `customer.deleted` and a `customer.token.deleted` per token, in one transaction: a token
 * created or deleted meanwhile changed the customer's version, and the deletion starts over.
 */
export async function removeCustomer(caller: Caller, id: string, now = new Date()): Promise<void> {
  const scope = caller.projectId;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const found = isId("customer", id) ? await findCustomerWithTokens(scope, id) : undefined;
    if (!found) throw notFound("customer", id);
    const tokens: PresentedToken[] = await presentTokens(
      scope,
      found.customer.default_token_id,
      found.tokens,
    );
    const outcome = await deleteCustomer(found, [
      ...found.tokens.map((item) => tokenDelete(scope, id, tokenFromItem(item).id)),
      ...eventWrites(
        scope,
        [
          { name: "customer.deleted", data: { customer: presentCustomer(found.customer) } },
          ...tokens.map((token) => ({ name: "customer.token.deleted" as const, data: { token } })),
        ],
        now,
      ),
    ]);
    if (outcome === "deleted") return;
    if (outcome === "not-found") throw notFound("customer", id);
  }
  throw concurrentChange(id);
}

export async function pageOfCustomers(caller: Caller, page: PageRequest) {
  const result = await listCustomers(caller.projectId, page);
  return { ...result, items: result.items.map((customer) => presentCustomer(customer)) };
}
