import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { adyenConnector } from "../../shared/gateways/adyen/connector.ts";
import type { CardCredentials, PaymentConnector, ThreeDSContext } from "../../shared/gateways/connector.ts";
import { stripeConnector } from "../../shared/gateways/stripe/connector.ts";
import { stripePayoutReader } from "../../shared/gateways/stripe/payouts.ts";
import {
  ADYEN_CHECKOUT_OPENAPI,
  freePort,
  missingTool,
  PRISM,
  type RunningTool,
  STRIPE_MOCK,
  startTool,
} from "../support/provider-tools.ts";

/**
 * Issue 19's contract tests: every request a connector sends, checked by the provider's own test
 * double against the provider's published API description. Stripe's official mock
 * (`../shared/tools/stripe-mock`, API version 2024-04-10) refuses an unknown path, method or
 * parameter with a 400 naming it. Its answers are fixtures, so only what is sent is checked here:
 * what the connectors make of answers is tested against the stateful doubles (`test/doubles`).
 */

interface Exchange {
  method: string;
  url: string;
  status: number;
  body: string;
}

/** Every HTTP exchange the code under test makes, through the real `fetch`. */
function recordExchanges(): { exchanges: Exchange[]; stop(): void } {
  const exchanges: Exchange[] = [];
  const realFetch = globalThis.fetch;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const response = await realFetch(input, init);
    const body = await response.clone().text();
    exchanges.push({
      method: init?.method ?? "GET",
      url: String(input),
      status: response.status,
      body,
    });
    return response;
  });
  return { exchanges, stop: () => spy.mockRestore() };
}

const CARD: CardCredentials = {
  number: "4242424242424242",
  expMonth: 12,
  expYear: 2030,
  cvc: "123",
  name: "Ada Lovelace",
  fingerprint: "fp",
};

const THREE_DS: ThreeDSContext = {
  channel: "browser",
  serverTransactionId: "tr_contract",
  fingerprintUrl: "https://api.example.com/3ds/t/fingerprint",
  challengeUrl: "https://api.example.com/3ds/t",
  returnUrl: "https://api.example.com/3ds/t/return",
};

/** Calls every operation of a connector, as the payments core would, with both kinds of initiator. */
async function everyOperation(connector: PaymentConnector, gatewayReference: string) {
  const card = connector.card;
  if (!card) throw new Error("a card connector");
  const scope = "test-proj_01CONTRACT";
  const reference = (n: number) => `op_01JCONTRACT00000000000000${n}`;
  await card.authorize({
    scope,
    reference: reference(1),
    amount: "10.00",
    currency: "EUR",
    card: CARD,
    incremental: true,
    initiator: "customer",
    scheme: "visa",
    threeDS: THREE_DS,
  });
  await card.authorize({
    scope,
    reference: reference(2),
    amount: "1000",
    currency: "JPY",
    card: { ...CARD, cvc: null },
    incremental: false,
    initiator: "merchant",
    scheme: null,
    threeDS: THREE_DS,
    networkTransactionId: "123456789012345",
  });
  await card.authorize({
    scope,
    reference: reference(3),
    amount: "10.00",
    currency: "EUR",
    card: CARD,
    incremental: false,
    initiator: "customer",
    scheme: null,
    threeDS: {
      ...THREE_DS,
      answer: { kind: "provider-redirect", params: { redirectResult: "X6XtfGC3!Y" } },
      providerState: { payment_intent: gatewayReference },
    },
  });
  await card.verifyCard({ scope, reference: reference(4), card: CARD, scheme: "visa", threeDS: THREE_DS });
  const followUp = { scope, gatewayReference, amount: "4.00", currency: "EUR", authorizedAmount: "10.00" };
  await connector.capture({ ...followUp, reference: reference(5) });
  await connector.refund({ ...followUp, reference: reference(6) });
  await card.incrementAuthorization({ ...followUp, reference: reference(7) });
  await connector.void({ scope, gatewayReference, reference: reference(8) });
  for (const kind of ["authorization", "verification", "capture", "void", "refund", "increment"] as const) {
    await connector.lookup({ scope, kind, reference: reference(1), gatewayReference }).catch(() => undefined);
  }
}

const stripeMissing = missingTool(STRIPE_MOCK);

describe.skipIf(stripeMissing)(
  `the stripe connector against Stripe's official mock${stripeMissing ? ` (skipped: ${stripeMissing})` : ""}`,
  () => {
    let mock: RunningTool;

    beforeAll(async () => {
      mock = await startTool(
        STRIPE_MOCK,
        ["-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0", "-strict-version-check"],
        /Listening for HTTP at address: (\S+)/,
      );
      process.env.STRIPE_API_URL = `http://${mock.url}`;
    });

    afterAll(async () => {
      await mock?.stop();
    });

    it("sends only requests Stripe's API description accepts, for every operation", async () => {
      const recorded = recordExchanges();
      await everyOperation(stripeConnector({ secretKey: "sk_test_123" }), "pi_1OPougJN5vQBdWEx8s2Dj0YR");
      recorded.stop();

      expect(recorded.exchanges.length).toBeGreaterThanOrEqual(15);
      const refused = recorded.exchanges
        .filter((exchange) => exchange.status >= 400)
        .map(
          (exchange) =>
            `${exchange.method} ${exchange.url} → ${exchange.status} ${exchange.body.slice(0, 300)}`,
        );
      expect(refused).toEqual([]);
      // Every write named its idempotency key's operation, and the version the mock carries.
      const paths = recorded.exchanges.map(
        (exchange) => `${exchange.method} ${new URL(exchange.url).pathname}`,
      );
      expect(paths).toEqual(
        expect.arrayContaining([
          "POST /v1/payment_methods",
          "POST /v1/payment_intents",
          "POST /v1/setup_intents",
          "POST /v1/payment_intents/pi_1OPougJN5vQBdWEx8s2Dj0YR/capture",
          "POST /v1/payment_intents/pi_1OPougJN5vQBdWEx8s2Dj0YR/cancel",
          "POST /v1/payment_intents/pi_1OPougJN5vQBdWEx8s2Dj0YR/increment_authorization",
          "POST /v1/refunds",
          "GET /v1/payment_intents/search",
          "GET /v1/setup_intents",
          "GET /v1/refunds",
        ]),
      );
    });

    it("reads payouts and their balance transactions only as Stripe's API description allows", async () => {
      const recorded = recordExchanges();
      const read = await stripePayoutReader("sk_test_123").payoutsBetween(1_700_000_000, 1_800_000_000);
      recorded.stop();

      const refused = recorded.exchanges
        .filter((exchange) => exchange.status >= 400)
        .map(
          (exchange) =>
            `${exchange.method} ${exchange.url} → ${exchange.status} ${exchange.body.slice(0, 300)}`,
        );
      expect(refused).toEqual([]);
      // The mock's fixture list holds one payout; its balance transactions are read by its id, expanded.
      expect(read.length).toBeGreaterThan(0);
      const urls = recorded.exchanges.map((exchange) => new URL(exchange.url));
      expect(urls.map((url) => `${url.pathname}`)).toEqual(
        expect.arrayContaining(["/v1/payouts", "/v1/balance_transactions"]),
      );
      const listed = urls.find((url) => url.pathname === "/v1/balance_transactions");
      expect(listed?.searchParams.get("payout")).toBe(read[0]?.payout.id);
      expect(listed?.searchParams.get("expand[0]")).toBe("data.source");
    });
  },
);

const adyenMissing = missingTool(ADYEN_CHECKOUT_OPENAPI);

describe.skipIf(adyenMissing)(
  `the adyen connector against Adyen's Checkout v71 OpenAPI document (Prism)${adyenMissing ? ` (skipped: ${adyenMissing})` : ""}`,
  () => {
    let prism: RunningTool;

    beforeAll(async () => {
      prism = await startTool(
        PRISM,
        ["mock", "--errors", "-h", "127.0.0.1", "-p", String(await freePort()), ADYEN_CHECKOUT_OPENAPI],
        /Prism is listening on (http:\/\/\S+)/,
      );
      process.env.ADYEN_CHECKOUT_API_URL = prism.url;
    }, 120_000);

    afterAll(async () => {
      await prism?.stop();
    });

    it("sends only requests Adyen's API description accepts, for every operation", async () => {
      const recorded = recordExchanges();
      const connector = adyenConnector({
        apiKey: "AQEyhmfxLI3MaBFLw0m",
        merchantAccount: "AcmeECOM",
        sandbox: true,
        configurationId: "gway_conf_01JCONTRACT0000000000000000",
      });
      await everyOperation(connector, "QFQTPCQ8HXSKGK82");
      recorded.stop();

      expect(recorded.exchanges.length).toBeGreaterThanOrEqual(8);
      // Prism answers 422 (and names them) for requests that break the document; 401 without a key.
      const refused = recorded.exchanges
        .filter((exchange) => exchange.status === 422 || exchange.status === 400 || exchange.status === 404)
        .map(
          (exchange) =>
            `${exchange.method} ${exchange.url} → ${exchange.status} ${exchange.body.slice(0, 400)}`,
        );
      expect(refused).toEqual([]);
      const paths = recorded.exchanges.map((exchange) => new URL(exchange.url).pathname);
      expect(paths).toEqual(
        expect.arrayContaining([
          "/payments",
          "/payments/details",
          "/payments/QFQTPCQ8HXSKGK82/captures",
          "/payments/QFQTPCQ8HXSKGK82/cancels",
          "/payments/QFQTPCQ8HXSKGK82/refunds",
          "/payments/QFQTPCQ8HXSKGK82/amountUpdates",
        ]),
      );
    });
  },
);
