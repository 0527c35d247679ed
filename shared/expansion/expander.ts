import DataLoader from "dataloader";
import type { Card } from "../cards/card.ts";
import { presentCard } from "../cards/card.ts";
import { findCards } from "../cards/store.ts";
import { nowIn } from "../clock.ts";
import { presentCustomer } from "../customers/customer.ts";
import { customerFromItem, findCustomerWithTokens } from "../customers/store.ts";
import { BATCH_GET_MAX_KEYS, batchGet } from "../db/batch.ts";
import { type ItemKey, keys } from "../db/keys.ts";
import type { Caller } from "../http/auth.ts";
import { MAX_LIMIT } from "../http/listing.ts";
import { presentInvoice } from "../invoices/invoice.ts";
import { invoiceFromItem } from "../invoices/store.ts";
import { listCustomerTransactions, transactionFromItem } from "../payments/store.ts";
import { presentTransaction } from "../payments/transaction.ts";
import { presentPlan } from "../plans/plan.ts";
import { planFromItem } from "../plans/store.ts";
import { presentProject } from "../projects/environment.ts";
import { customerSubscriptions } from "../subscriptions/store.ts";
import { presentSubscription } from "../subscriptions/subscription.ts";
import { tokenFromItem } from "../tokens/store.ts";
import { presentToken, type Token } from "../tokens/token.ts";
import { EXPANDABLE, type ExpandTree, type ResourceType } from "./fields.ts";

/**
 * Expands presented resources (what the domains' presenters return) along the paths of a tree
 * (`fields.ts`), whatever route answers them. Links are read from the presented resource's `_id`
 * fields, so a create, an update, a payment or a page is expanded the same way.
 *
 * Round trips, for one resource or a page of a hundred alike: every link of one level of the tree
 * (every field, every resource) is read in one BatchGetItem (`DataLoader` gathers the keys asked
 * for in the same turn; a hundred keys per call), the cards of the tokens read in a second one, and
 * the next level of the tree after that. A list (a customer's tokens, subscriptions, transactions)
 * is one query per customer, in parallel: DynamoDB cannot batch queries. The project comes with
 * the caller, and a link read twice (the same customer of ten invoices) is read once per request.
 */
export type Presented = Record<string, unknown>;

export async function expandResources(
  caller: Caller,
  type: ResourceType,
  resources: readonly Presented[],
  tree: ExpandTree,
): Promise<Presented[]> {
  return expandWith(readers(caller), type, resources, tree);
}

/** A customer's expanded `transactions`: the most recent ones (the route pages through all). */
const EXPANDED_TRANSACTIONS = MAX_LIMIT;

async function expandWith(
  read: Readers,
  type: ResourceType,
  resources: readonly Presented[],
  tree: ExpandTree,
): Promise<Presented[]> {
  const fields = Object.entries(tree).filter(([name]) => !EXPANDABLE[type][name]?.alwaysShown);
  if (fields.length === 0 || resources.length === 0) return [...resources];
  const expanded = await Promise.all(
    fields.map(async ([name, subtree]) => {
      const field = EXPANDABLE[type][name];
      if (!field) throw new Error(`${type} cannot expand ${name}`);
      const values = await Promise.all(
        resources.map((resource) =>
          field.list ? read.list(field.type, resource) : read.one(field.type, name, resource),
        ),
      );
      return { name, values: await expandValues(read, field.type, values, subtree) };
    }),
  );
  return resources.map((resource, index) =>
    expanded.reduce((result, { name, values }) => placed(result, name, values[index]), resource),
  );
}

type Value = Presented | Presented[] | null;

/** Expands the next level of the tree over every value of a field at once. */
async function expandValues(read: Readers, type: ResourceType, values: Value[], tree: ExpandTree) {
  if (Object.keys(tree).length === 0) return values;
  const unique = [...new Set(values.flatMap((value) => (value === null ? [] : [value].flat())))];
  const expanded = new Map(
    (await expandWith(read, type, unique, tree)).map((result, index) => [unique[index], result]),
  );
  const swap = (value: Presented) => expanded.get(value) ?? value;
  return values.map((value) =>
    value === null ? null : Array.isArray(value) ? value.map(swap) : swap(value),
  );
}

/**
 * The resource with `field` set: in place when the presenter shows it (`tokens: null`), else just
 * after its `_id` field (`customer_id`, `customer`), which stays.
 */
function placed(resource: Presented, field: string, value: unknown): Presented {
  if (Object.hasOwn(resource, field)) return { ...resource, [field]: value };
  const result: Presented = {};
  for (const [name, current] of Object.entries(resource)) {
    result[name] = current;
    if (name === `${field}_id`) result[field] = value;
  }
  if (!Object.hasOwn(result, field)) result[field] = value;
  return result;
}

type Readers = ReturnType<typeof readers>;

const itemKey = (key: { pk?: unknown; sk?: unknown }) => `${key.pk}\u0000${key.sk}`;
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** The reads of one request, batched and remembered (`DataLoader`), presented as the domains do. */
function readers(caller: Caller) {
  const scope = caller.projectId;
  const now = nowIn(caller.environment);
  const items = new DataLoader<ItemKey, Record<string, unknown> | null, string>(
    async (wanted) => {
      const found = new Map((await batchGet(wanted)).map((item) => [itemKey(item), item]));
      return wanted.map((key) => found.get(itemKey(key)) ?? null);
    },
    { cacheKeyFn: itemKey, maxBatchSize: BATCH_GET_MAX_KEYS },
  );
  const cards = new DataLoader<string, Card | null>(
    async (ids) => {
      const found = await findCards(scope, ids);
      return ids.map((id) => found.get(id) ?? null);
    },
    { maxBatchSize: BATCH_GET_MAX_KEYS },
  );
  const item = async (key: ItemKey, entity: string) => {
    const found = await items.load(key);
    return found?.type === entity ? found : null;
  };
  const tokenKey = (customerId: string, tokenId: string) => keys.child(scope, customerId, "token", tokenId);
  const presentTokens = (tokens: readonly Token[], defaultTokenId: unknown) =>
    Promise.all(
      tokens.map(async (token) => {
        const card = token.card_id ? await cards.load(token.card_id) : null;
        return presentToken(token, card, text(defaultTokenId));
      }),
    );

  /** One linked resource of `resource`, by its `<field>_id`, presented; null when not set or gone. */
  async function one(type: ResourceType, field: string, resource: Presented): Promise<Presented | null> {
    if (type === "project") return resource.project_id === scope ? presentProject(caller.environment) : null;
    const id = text(resource[`${field}_id`]);
    if (id === null) return null;
    switch (type) {
      case "customer": {
        const found = await item(keys.resource(scope, id), "customer");
        return found && presentCustomer(customerFromItem(found));
      }
      case "invoice": {
        const found = await item(keys.resource(scope, id), "invoice");
        return found && presentInvoice(invoiceFromItem(found));
      }
      case "transaction": {
        const found = await item(keys.resource(scope, id), "transaction");
        return found && presentTransaction(transactionFromItem(found));
      }
      case "plan": {
        const found = await item(keys.plan(scope, id), "plan");
        return found && presentPlan(planFromItem(found));
      }
      case "card": {
        const card = await cards.load(id);
        return card && presentCard(card);
      }
      case "token": {
        // A token is an item of its customer's partition; whether it is the default is the customer's.
        const customerId = text(resource.customer_id);
        if (customerId === null) return null;
        const [found, customer] = await Promise.all([
          item(tokenKey(customerId, id), "token"),
          item(keys.resource(scope, customerId), "customer"),
        ]);
        if (!found) return null;
        const [token] = await presentTokens([tokenFromItem(found)], customer?.default_token_id);
        return token ?? null;
      }
      case "subscription":
        throw new Error(`No field expands to one ${type}`);
    }
  }

  const tokensOf = new DataLoader<string, Presented[]>((customerIds) =>
    Promise.all(
      customerIds.map(async (customerId) => {
        const found = await findCustomerWithTokens(scope, customerId);
        if (!found) return [];
        const tokens = found.tokens.map(tokenFromItem).sort((a, b) => (a.id < b.id ? -1 : 1));
        return presentTokens(tokens, found.customer.default_token_id);
      }),
    ),
  );

  /** The resources a customer has of `type`, oldest first (transactions: the most recent ones). */
  async function list(type: ResourceType, resource: Presented): Promise<Presented[]> {
    const customerId = text(resource.id);
    if (customerId === null) return [];
    switch (type) {
      case "token":
        return tokensOf.load(customerId);
      case "subscription":
        return (await customerSubscriptions(scope, customerId))
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .map((subscription) => presentSubscription(subscription, now));
      case "transaction": {
        const page = await listCustomerTransactions(scope, customerId, {
          limit: EXPANDED_TRANSACTIONS,
          order: "desc",
        });
        return page.items.reverse().map(presentTransaction);
      }
      default:
        throw new Error(`No field expands to a list of ${type}`);
    }
  }

  return { one, list };
}
