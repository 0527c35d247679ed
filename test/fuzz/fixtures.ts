/**
 * Real resources for the fuzzer to address, made through the API itself in both environments of
 * the fuzz project: a customer with a token, cards, invoices in several states (fresh, authorized,
 * captured and refunded, waiting for a 3DS answer, paid natively), their transactions, a refund,
 * events, a plan, a subscription, the gateway configurations.
 * Path parameters are filled with them, so requests reach the code behind an existing id too.
 */

import type { ProjectCredentials } from "../../shared/projects/project.ts";
import type { ApiResponse, Client } from "../e2e/harness.ts";
import { api } from "../e2e/harness.ts";

export type Environment = "sandbox" | "live";

/** A resource and what it is for the fuzzer (`authorized`, `challenge`, …). */
export interface Fixture {
  id: string;
  role: string;
}

export interface EnvironmentFixtures {
  /** By the path parameter they can fill (`invoice_id` → the invoices). */
  byParameter: Record<string, Fixture[]>;
  /** What a body may name as a payment source: cards and customer tokens. */
  sources: string[];
  all: Fixture[];
}

export type Fixtures = Record<Environment, EnvironmentFixtures>;

export async function createFixtures(url: string, project: ProjectCredentials): Promise<Fixtures> {
  return {
    sandbox: await environmentFixtures(api(url, project.sandbox), project.sandbox.project_id),
    live: await environmentFixtures(api(url, project.live), project.live.project_id),
  };
}

async function environmentFixtures(client: Client, projectId: string): Promise<EnvironmentFixtures> {
  const fixtures: EnvironmentFixtures = { byParameter: {}, sources: [], all: [] };
  const add = (parameter: string, id: string | undefined, role: string) => {
    if (id === undefined) return;
    const fixture = { id, role };
    fixtures.byParameter[parameter] = [...(fixtures.byParameter[parameter] ?? []), fixture];
    fixtures.all.push(fixture);
  };
  const card = (number: string) =>
    created(client.post("/cards", { number, exp_month: "12", exp_year: "2099", cvc2: "123" }), "card");
  const invoice = (amount: string) =>
    created(client.post("/invoices", { name: "Fuzz", amount, currency: "USD" }), "invoice");
  const pay = async (step: "authorize" | "capture", number: string, role: string) => {
    const invoiceId = await invoice("10.00");
    const source = await card(number);
    if (!invoiceId || !source) return undefined;
    const answer = await client.post(`/invoices/${invoiceId}/${step}`, { source });
    add("invoice_id", invoiceId, role);
    add("transaction_id", answer.body?.transaction?.id, role);
    return answer;
  };

  add("project_id", projectId, "own");
  // Projects a request may delete (`DELETE /projects/{id}`) instead of the campaign's own.
  for (const name of ["Fuzz child A", "Fuzz child B", "Fuzz child C"]) {
    const child = await client.post("/supervised-projects", { name });
    add("disposable_project_id", child.body?.project?.id, "supervised");
  }
  const customer = await created(client.post("/customers", { first_name: "Fuzz" }), "customer");
  add("customer_id", customer, "customer");
  // Several cards: requests delete (anonymize) the ones they address.
  const plainCards = [
    await card("4242424242424242"),
    await card("5555555555554444"),
    await card("378282246310005"),
  ];
  for (const id of plainCards) add("card_id", id, "card");
  const tokenCard = await card("4242424242424242");
  const token = customer
    ? await created(client.post(`/customers/${customer}/tokens`, { source: tokenCard }), "token")
    : undefined;
  add("token_id", token, "token");
  fixtures.sources.push(...[...plainCards, token].filter((id): id is string => id !== undefined));

  add("invoice_id", await invoice("10.00"), "fresh");
  await pay("authorize", "4242424242424242", "authorized");
  const captured = await pay("capture", "4242424242424242", "captured");
  const transactionId = captured?.body?.transaction?.id as string | undefined;
  if (transactionId) {
    add(
      "refund_id",
      await created(client.post(`/transactions/${transactionId}/refunds`, { amount: "1.00" }), "refund"),
      "refund",
    );
  }
  const challenged = await pay("authorize", "4000000000000101", "challenged");
  const challengeUrl = challenged?.body?.customer_action?.value;
  if (typeof challengeUrl === "string") add("token", challengeUrl.split("/").pop(), "challenge");

  const configurations = await client.get("/gateway-configurations?with_disabled=true");
  for (const configuration of configurations.body?.gateway_configurations ?? []) {
    add("gateway_configuration_id", configuration.id, configuration.payment_method);
    if (configuration.payment_method === "native-apm") {
      const native = `${configuration.id}.${configuration.gateway_name}`;
      add("gateway_configuration_id", native, "native-payment-id");
      const nativeInvoice = await invoice("10.00");
      if (nativeInvoice) {
        await client.post(`/invoices/${nativeInvoice}/native-payment`, {
          gateway_configuration_id: native,
          native_apm: { parameter_values: { email: "native-apm-success@example.com" } },
        });
        add("invoice_id", nativeInvoice, "native-customer-input");
      }
    }
  }
  add("gateway_name", "sandbox", "gateway");
  const planId = `fuzz-${crypto.randomUUID().slice(0, 8)}`;
  const plan = await created(
    client.post("/plans", { id: planId, name: "Fuzz", amount: "5.00", currency: "USD", interval: "1m" }),
    "plan",
  );
  add("plan_id", plan, "plan");
  if (customer && plan) {
    const subscription = await created(
      client.post("/subscriptions", {
        customer_id: customer,
        plan_id: plan,
        source: await card("4242424242424242"),
      }),
      "subscription",
    );
    add("subscription_id", subscription, "subscription");
  }

  const events = await client.get("/events?limit=3");
  for (const event of events.body?.events ?? []) add("event_id", event.id, "event");
  return fixtures;
}

/** The id of the `resource` a creation answered, or undefined when it was refused. */
async function created(answer: Promise<ApiResponse>, resource: string): Promise<string | undefined> {
  const { status, body } = await answer;
  const id: unknown = body?.[resource]?.id;
  return status >= 200 && status < 300 && typeof id === "string" ? id : undefined;
}
