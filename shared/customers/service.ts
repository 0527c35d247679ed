import type { PageRequest } from "../db/listing.ts";
import type { TransactItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { presentProject } from "../projects/project.ts";
import { parseInput } from "../validation/parse.ts";
import { type Customer, customerChanges, newCustomer, presentCustomer } from "./customer.ts";
import { createCustomerInput, updateCustomerInput } from "./schema.ts";
import {
  deleteCustomer,
  findCustomer,
  findCustomerWithTokens,
  insertCustomer,
  listCustomers,
  updateCustomer,
} from "./store.ts";

/** What a customer can expand: its tokens (same partition, one query) and its project. */
export const CUSTOMER_EXPANSIONS = ["tokens", "project"] as const;

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
  await insertCustomer(customer, commit(presented));
  return presented;
}

export async function getCustomer(caller: Caller, id: string, expand: Set<string>) {
  if (expand.has("tokens")) {
    const found = await findCustomerWithTokens(caller.projectId, id);
    if (!found) throw notFound("customer", id);
    return present(caller, found.customer, expand, found.tokens);
  }
  const customer = await findCustomer(caller.projectId, id);
  if (!customer) throw notFound("customer", id);
  return present(caller, customer, expand);
}

export async function changeCustomer(caller: Caller, id: string, input: unknown, now = new Date()) {
  const changes = customerChanges(parseInput(updateCustomerInput, input));
  const outcome = await updateCustomer(caller.projectId, id, changes, now);
  if ("notFound" in outcome) throw notFound("customer", id);
  if ("currencyConflict" in outcome) {
    throw new ApiError(
      400,
      "request.validation.currency-immutable",
      "A customer's currency cannot change once set.",
      [{ name: "currency", message: `is already ${outcome.currencyConflict} and cannot change` }],
    );
  }
  return presentCustomer(outcome.updated);
}

export async function removeCustomer(caller: Caller, id: string): Promise<void> {
  if (!(await deleteCustomer(caller.projectId, id))) throw notFound("customer", id);
}

export async function pageOfCustomers(caller: Caller, page: PageRequest, expand: Set<string>) {
  const result = await listCustomers(caller.projectId, page);
  const items = await Promise.all(
    result.items.map((customer) =>
      expand.has("tokens") ? getCustomer(caller, customer.id, expand) : present(caller, customer, expand),
    ),
  );
  return { ...result, items };
}

function present(caller: Caller, customer: Customer, expand: Set<string>, tokens?: unknown[]) {
  return presentCustomer(customer, {
    tokens,
    project: expand.has("project") ? presentProject(caller.environment) : undefined,
  });
}
