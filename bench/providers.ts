/**
 * `npm run bench`, the providers' part: a card payment (authorize, then capture) through the
 * `stripe` and `adyen` connectors (the card and invoice made beforehand) against the project's doubles of each provider, every provider
 * answer delayed by a fixed latency (`BENCH_PROVIDER_LATENCY_MS`, default 50 ms, a provider's
 * usual), beside the very provider calls the connector makes, sent straight to the double from the
 * same process: what the API adds per payment on top of its provider. Prints figures; asserts nothing.
 *
 *   npx tsx bench/providers.ts      # BENCH_PAYMENTS (default 100), BENCH_CONCURRENCY (default 4)
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalStack } from "../lib/local/start.ts";
import { startAdyenDouble } from "../test/doubles/adyen.ts";
import { startStripeDouble } from "../test/doubles/stripe.ts";
import { type Json, merchantClient } from "./client.ts";
import { formatTable, measure } from "./stats.ts";

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const LATENCY_MS = Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 50);

const [stripe, adyen] = await Promise.all([
  startStripeDouble({ latencyMs: LATENCY_MS }),
  startAdyenDouble({ latencyMs: LATENCY_MS }),
]);
process.env.STRIPE_API_URL = stripe.url;
process.env.ADYEN_CHECKOUT_API_URL = adyen.url;
const dataDir = await mkdtemp(join(tmpdir(), "payment-api-bench-providers-"));
const stack = await startLocalStack({ port: 0, dataDir, log: () => {} });
const { createProject } = await import("../shared/projects/project.ts");

const client = (projectId: string, key: string) => merchantClient(stack.url, projectId, key);

/** A sandbox environment whose only card configuration is `gateway`'s. */
async function environment(gateway: string, settings: Record<string, string>) {
  const project = await createProject(`Bench ${gateway}`);
  const send = client(project.sandbox.project_id, project.sandbox.private_key);
  await send("POST", `/gateways/${gateway}/gateway-configurations`, { settings });
  const { gateway_configurations: cards } = (await send(
    "GET",
    "/gateway-configurations?filter=card-payments",
  )) as {
    gateway_configurations: Array<{ id: string; gateway_name: string }>;
  };
  for (const configuration of cards.filter((item) => item.gateway_name === "sandbox")) {
    await send("PUT", `/gateway-configurations/${configuration.id}`, { enabled: false });
  }
  return send;
}

/** A card and an invoice for each payment to come, made before the clock starts. */
async function prepared(send: Awaited<ReturnType<typeof environment>>, number: string, count: number) {
  const ready: Array<{ card: string; invoice: string }> = [];
  for (let index = 0; index < count; index++) {
    const card = (await send("POST", "/cards", { number, exp_month: 3, exp_year: 2030, cvc2: "737" })) as {
      card: { id: string };
    };
    const invoice = (await send("POST", "/invoices", {
      name: "Bench",
      amount: "10.00",
      currency: "EUR",
    })) as {
      invoice: { id: string };
    };
    ready.push({ card: card.card.id, invoice: invoice.invoice.id });
  }
  return ready;
}

/** One payment through the API: its authorization, then its capture (two requests). */
async function payThroughApi(
  send: Awaited<ReturnType<typeof environment>>,
  payment: { card: string; invoice: string },
) {
  await send("POST", `/invoices/${payment.invoice}/authorize`, { source: payment.card });
  await send("POST", `/invoices/${payment.invoice}/capture`, {});
}

let sequence = 0;
const reference = () => `op_bench${String(++sequence).padStart(20, "0")}`;

/** The provider calls the stripe connector makes for one authorize and capture, sent directly. */
async function stripeAlone() {
  const post = (path: string, form: string, key: string) =>
    fetch(`${stripe.url}${path}`, {
      method: "POST",
      headers: {
        authorization: "Bearer sk_test_bench",
        "stripe-version": "2024-04-10",
        "content-type": "application/x-www-form-urlencoded",
        "idempotency-key": key,
      },
      body: form,
    }).then((response) => response.json() as Promise<Json>);
  const ref = reference();
  const method = await post(
    "/v1/payment_methods",
    "type=card&card[number]=4242424242424242&card[exp_month]=3&card[exp_year]=2030&card[cvc]=737",
    `${ref}-pm`,
  );
  const intent = await post(
    "/v1/payment_intents",
    `amount=1000&currency=eur&payment_method=${method.id}&payment_method_types[0]=card&capture_method=manual&confirm=true&off_session=true&metadata[reference]=${ref}&expand[0]=latest_charge`,
    ref,
  );
  await post(`/v1/payment_intents/${intent.id}/capture`, "amount_to_capture=1000", reference());
}

/** The provider calls the adyen connector makes for one authorize and capture, sent directly. */
async function adyenAlone() {
  const post = (path: string, body: unknown, key: string) =>
    fetch(`${adyen.url}${path}`, {
      method: "POST",
      headers: { "x-api-key": "bench", "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
    }).then((response) => response.json() as Promise<Json>);
  const ref = reference();
  const payment = await post(
    "/payments",
    {
      amount: { value: 1000, currency: "EUR" },
      reference: ref,
      merchantAccount: "Bench",
      paymentMethod: {
        type: "scheme",
        number: "4111111111111111",
        expiryMonth: "03",
        expiryYear: "2030",
        cvc: "737",
      },
      returnUrl: "https://example.com/r",
      shopperInteraction: "ContAuth",
      additionalData: { manualCapture: "true" },
    },
    ref,
  );
  const capture = reference();
  await post(
    `/payments/${payment.pspReference}/captures`,
    { merchantAccount: "Bench", reference: capture, amount: { value: 1000, currency: "EUR" } },
    capture,
  );
}

const viaStripe = await environment("stripe", { secret_key: "sk_test_bench" });
const viaAdyen = await environment("adyen", { api_key: "AQEbenchbenchbench", merchant_account: "Bench" });

const WARMUP = 5;
const stripePayments = await prepared(viaStripe, "4242424242424242", PAYMENTS + WARMUP);
const adyenPayments = await prepared(viaAdyen, "4111111111111111", PAYMENTS + WARMUP);
for (let index = 0; index < WARMUP; index++) {
  await payThroughApi(viaStripe, stripePayments[PAYMENTS + index] as { card: string; invoice: string });
  await payThroughApi(viaAdyen, adyenPayments[PAYMENTS + index] as { card: string; invoice: string });
  await stripeAlone();
  await adyenAlone();
}

const stripeApi = await measure(PAYMENTS, CONCURRENCY, (index) =>
  payThroughApi(viaStripe, stripePayments[index] as { card: string; invoice: string }),
);
const stripeRaw = await measure(PAYMENTS, CONCURRENCY, stripeAlone);
const adyenApi = await measure(PAYMENTS, CONCURRENCY, (index) =>
  payThroughApi(viaAdyen, adyenPayments[index] as { card: string; invoice: string }),
);
const adyenRaw = await measure(PAYMENTS, CONCURRENCY, adyenAlone);

console.log(
  `\nA payment (authorize, then capture) through each connector, provider latency ${LATENCY_MS} ms per call, ${PAYMENTS} payments, ${CONCURRENCY} in flight\n`,
);
console.log(
  formatTable(
    ["path", "p50 ms", "p99 ms", "payments/s", "API adds (p50)"],
    [
      [
        "stripe: through the API (2 requests)",
        stripeApi.p50.toFixed(1),
        stripeApi.p99.toFixed(1),
        stripeApi.rps.toFixed(1),
        `${(stripeApi.p50 - stripeRaw.p50).toFixed(1)} ms`,
      ],
      [
        "stripe: its 3 provider calls alone",
        stripeRaw.p50.toFixed(1),
        stripeRaw.p99.toFixed(1),
        stripeRaw.rps.toFixed(1),
        "",
      ],
      [
        "adyen: through the API (2 requests)",
        adyenApi.p50.toFixed(1),
        adyenApi.p99.toFixed(1),
        adyenApi.rps.toFixed(1),
        `${(adyenApi.p50 - adyenRaw.p50).toFixed(1)} ms`,
      ],
      [
        "adyen: its 2 provider calls alone",
        adyenRaw.p50.toFixed(1),
        adyenRaw.p99.toFixed(1),
        adyenRaw.rps.toFixed(1),
        "",
      ],
    ],
  ),
);

await stack.stop();
await Promise.all([stripe.close(), adyen.close()]);
await rm(dataDir, { recursive: true, force: true });
