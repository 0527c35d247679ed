import type { PageRequest } from "../db/listing.ts";
import type { TransactItem } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import {
  busy,
  conflict,
  errorTypeName,
  type InvalidField,
  notFound,
  validationFailed,
} from "../http/errors.ts";
import { isId } from "../ids.ts";
import { parseInput } from "../validation/parse.ts";
import { checkInvoiceWebhookUrl } from "../webhooks/url-policy.ts";
import {
  type Invoice,
  newInvoice,
  type PresentedInvoice,
  presentInvoice,
  type SettableField,
  withChanges,
} from "./invoice.ts";
import {
  amountsNotInCurrency,
  createInvoiceInput,
  type InvoiceChanges,
  oversizedField,
  updateInvoiceInput,
} from "./schema.ts";
import {
  deleteInvoice,
  findInvoice,
  insertInvoice,
  type LinkChecks,
  listInvoices,
  type MissingLink,
  updateInvoice,
} from "./store.ts";

/** Attempts of an update that keeps meeting a concurrent change of the same invoice. */
const UPDATE_ATTEMPTS = 3;

const concurrentChange = (id: string) =>
  busy("request.invoice.concurrent-update", `Invoice ${id} is being changed by another request.`);

const paymentAttempted = (id: string, action: "changed" | "deleted") =>
  conflict(
    "request.invoice.payment-attempted",
    `A payment was already attempted on invoice ${id}: it can no longer be ${action}.`,
  );

/**
 * Validates and stores a new invoice; `commit` receives the presented invoice and returns the
 * writes that must commit with it (the stored answer of an idempotent request). The customer and
 * token it names are checked in the same transaction as the write.
 */
export async function createInvoice(
  caller: Caller,
  input: unknown,
  commit: (presented: PresentedInvoice) => TransactItem[],
  now = new Date(),
): Promise<PresentedInvoice> {
  const invoice = newInvoice(caller, parseInput(createInvoiceInput, input), now);
  checkRulesBetweenFields(invoice);
  await checkInvoiceWebhookUrl(caller, invoice.webhook_url);
  const links = linksToCheck(invoice, { customer: true, token: true });
  const presented = presentInvoice(invoice);
  const outcome = await insertInvoice(invoice, links, commit(presented));
  if (outcome !== "created") throw linkNotFound(invoice, outcome);
  return presented;
}

export async function getInvoice(caller: Caller, id: string): Promise<PresentedInvoice> {
  const found = isId("invoice", id) ? await findInvoice(caller.projectId, id) : undefined;
  if (!found) throw notFound("invoice", id);
  return presentInvoice(found.invoice);
}

/**
 * Changes the fields sent, while no payment has been attempted. The invoice is read, changed and
 * checked as a whole (a new currency must suit every amount), then written on the condition that
 * it is still the version read and still unpaid; a concurrent change makes it start over.
 */
export async function changeInvoice(caller: Caller, id: string, input: unknown): Promise<PresentedInvoice> {
  const changes = parseInput(updateInvoiceInput, input);
  await checkInvoiceWebhookUrl(caller, changes.webhook_url);
  for (let attempt = 1; ; attempt++) {
    const current = isId("invoice", id) ? await findInvoice(caller.projectId, id) : undefined;
    if (!current) throw notFound("invoice", id);
    if (current.invoice.transaction_id !== null) throw paymentAttempted(id, "changed");

    const next = withChanges(current.invoice, changes);
    checkRulesBetweenFields(next, changes);
    const links = linksToCheck(next, {
      customer: changes.customer_id !== undefined,
      token: changes.customer_id !== undefined || changes.token_id !== undefined,
    });
    const outcome = await updateInvoice(current, sentFields(next, changes), links);
    if (outcome === "updated") return presentInvoice(next);
    if (outcome === "not-found") throw notFound("invoice", id);
    if (outcome === "payment-attempted") throw paymentAttempted(id, "changed");
    if (outcome !== "changed") throw linkNotFound(next, outcome);
    if (attempt >= UPDATE_ATTEMPTS) throw concurrentChange(id);
  }
}

/** Deletes an invoice on which no payment has been attempted. */
export async function removeInvoice(caller: Caller, id: string): Promise<void> {
  const outcome = isId("invoice", id) ? await deleteInvoice(caller.projectId, id) : "not-found";
  if (outcome === "not-found") throw notFound("invoice", id);
  if (outcome === "payment-attempted") throw paymentAttempted(id, "deleted");
  if (outcome === "changed") throw concurrentChange(id);
}

export async function pageOfInvoices(caller: Caller, page: PageRequest) {
  const result = await listInvoices(caller.projectId, page);
  return { ...result, items: result.items.map((invoice) => presentInvoice(invoice)) };
}

/**
 * The rules that span fields: every amount fits the currency, a token comes with its customer, and
 * the invoice fits one table item. On an update, an amount the request did not send that no longer
 * fits names `currency` (the field that changed).
 */
function checkRulesBetweenFields(invoice: Invoice, changes?: InvoiceChanges): void {
  const issues: InvalidField[] = amountsNotInCurrency(invoice).map((issue) =>
    !changes || amountWasSent(issue.name, changes)
      ? issue
      : { name: "currency", message: `cannot be ${invoice.currency}: ${issue.name} ${issue.message}` },
  );
  if (invoice.token_id !== null && invoice.customer_id === null) {
    issues.push({ name: "token_id", message: "needs customer_id: a token belongs to a customer" });
  }
  const oversized = oversizedField(presentInvoice(invoice));
  if (oversized) issues.push(oversized);
  const [first] = issues;
  if (first) throw validationFailed(`invalid-${errorTypeName(first.name)}`, issues);
}

function amountWasSent(path: string, changes: InvoiceChanges): boolean {
  if (path === "amount") return changes.amount !== undefined;
  if (path.startsWith("details[")) return changes.details !== undefined;
  if (path === "shipping.amount") return changes.shipping?.amount !== undefined;
  if (path === "tax.amount") return changes.tax?.amount !== undefined;
  return true;
}

/**
 * The links the write must find in place. An id that cannot name a resource is refused at once; a
 * well-formed one is checked by a condition of the write, so a customer deleted meanwhile is caught.
 */
function linksToCheck(invoice: Invoice, check: { customer: boolean; token: boolean }): LinkChecks {
  const { customer_id: customerId, token_id: tokenId } = invoice;
  const links: LinkChecks = {};
  if (check.customer && customerId !== null) {
    if (!isId("customer", customerId)) throw notFound("customer", customerId);
    links.customerId = customerId;
  }
  if (check.token && tokenId !== null && customerId !== null) {
    if (!isId("token", tokenId)) throw notFound("token", tokenId);
    links.token = { customerId, tokenId };
  }
  return links;
}

function linkNotFound(invoice: Invoice, outcome: MissingLink) {
  return outcome.missing === "customer"
    ? notFound("customer", invoice.customer_id ?? undefined)
    : notFound("token", invoice.token_id ?? undefined);
}

/** The top-level fields a request sent, with their new values. */
function sentFields(next: Invoice, changes: InvoiceChanges): Partial<Pick<Invoice, SettableField>> {
  const sent = (Object.keys(changes) as SettableField[]).filter((field) => changes[field] !== undefined);
  return Object.fromEntries(sent.map((field) => [field, next[field]]));
}
