import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { dynamo } from "../../shared/db/client.ts";
import { recoverReservations } from "../../shared/payments/recovery.ts";
import { OPERATION_LEASE_MS } from "../../shared/payments/transaction.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import {
  actionValue,
  decodes,
  deviceOf,
  gatewayRequest,
  type MobileResponse,
  mobileClient,
  type Platform,
  testHandler,
} from "../support/mobile-libraries.ts";

/**
 * Issue 14: 3DS2 as the Android and iOS libraries speak it, against the in-process API: the answers
 * they decode, every round replayed (with the same Idempotency-Key and without), `gway_req_`
 * answers bound to their payment, and malformed ones refused. The whole walk on `npm start` is in
 * `test/e2e/mobile-local-stack.test.ts`.
 */
const local = useInProcessApi("mobile 3DS2 test");
const merchant = local.sandbox;

const FRICTIONLESS = "4000000000003063";
const CHALLENGE = "4000000000000101";
const FINGERPRINT_FAILS = "4000000000003220";
const SCA_CUSTOMER_INITIATED = "4000000000003253";

const app = (platform: Platform) => mobileClient(local.url, local.project.sandbox.project_id, platform);

/** `POST /cards` as the libraries send it (Android adds `token_type` and `payment_token`). */
async function tokenize(send: ReturnType<typeof app>, platform: Platform, number: string) {
  const card = await send({
    method: "POST",
    path: "/cards",
    body: {
      number,
      exp_month: 12,
      exp_year: 2031,
      cvc: "123",
      name: "Ada Lovelace",
      contact: { address1: "1 Main St", city: "London", zip: "N1 9GU", country_code: "GB" },
      preferred_scheme: null,
      metadata: {},
      device: deviceOf(platform),
      ...(platform === "android" ? { token_type: "", payment_token: null } : {}),
    },
  });
  expect(card.status).toBe(200);
  return card.body.card.id as string;
}

/** What the libraries send to authorize; a 3DS answer is the same request with only `source` changed. */
function authorization(platform: Platform, source: string) {
  return {
    source,
    save_source: false,
    incremental: false,
    enable_three_d_s_2: true,
    third_party_sdk_version: "2.2.0",
    override_mac_blocking: false,
    allow_fallback_to_sale: false,
    metadata: null,
    device: deviceOf(platform),
  };
}

/** An invoice the merchant created, and the app's card for it. */
async function payment(platform: Platform, number: string) {
  const send = app(platform);
  const cardId = await tokenize(send, platform, number);
  const invoice = await merchant.post("/invoices", {
    name: "Mobile order",
    amount: "25.00",
    currency: "EUR",
  });
  expect(invoice.status).toBe(200);
  const invoiceId = invoice.body.invoice.id as string;
  const authorize = (source: string, retryOf?: MobileResponse) =>
    send({
      method: "POST",
      path: `/invoices/${invoiceId}/authorize`,
      body: authorization(platform, source),
      ...(retryOf ? { retryOf } : {}),
    });
  return { send, cardId, invoiceId, authorize };
}

const transactionOf = async (invoiceId: string) =>
  (await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction;

const operationTypes = async (invoiceId: string) =>
  ((await transactionOf(invoiceId)).operations as { type: string }[]).map((operation) => operation.type);

/** The answer decodes as both libraries require, and carries the action it should. */
function expectAction(response: MobileResponse, type: string | null) {
  expect(response.status).toBe(200);
  decodes.ios.success.parse(response.body);
  const action = decodes.customerAction.parse(response.body.customer_action);
  expect(action?.type ?? null).toBe(type);
  // The public key is answered only what the app acts on: no transaction, no `{}` action.
  expect(response.body.transaction).toBeUndefined();
  if (type === null) expect(response.body).not.toHaveProperty("customer_action");
  return action;
}

function expectError(response: MobileResponse, status: number, errorType: string) {
  expect(response.status).toBe(status);
  decodes.ios.error.parse(response.body);
  decodes.android.error.parse(response.body);
  expect(response.body.error_type).toBe(errorType);
}

describe("what the mobile libraries decode", () => {
  it.each(["android", "ios"] as const)("decodes the card answers on %s", async (platform) => {
    const send = app(platform);
    const cardId = await tokenize(send, platform, "4242424242424242");
    const fetched = await merchant.get(`/cards/${cardId}`);
    decodes[platform].card.parse(fetched.body.card);

    const changed = await send({
      method: "PUT",
      path: `/cards/${cardId}`,
      body: { cvc: "456", preferred_scheme: "visa" },
    });
    expect(changed.status).toBe(200);
    decodes[platform].card.parse(changed.body.card);
    expect(changed.body.card).toMatchObject({ preferred_scheme: "visa", cvc_check: "pending" });
    expect(Date.parse(changed.body.card.updated_at)).toBeGreaterThanOrEqual(
      Date.parse(changed.body.card.created_at),
    );

    const refused = await send({
      method: "PUT",
      path: `/cards/${cardId}`,
      body: { preferred_scheme: "mastercard" },
    });
    expectError(refused, 400, "request.validation.invalid-preferred-scheme");
    const badCvc = await send({ method: "PUT", path: `/cards/${cardId}`, body: { cvc: "12" } });
    expectError(badCvc, 400, "request.validation.invalid-cvc");
  });

  it("marks a card expiring this month or in the next two as expiring soon", async () => {
    const now = new Date();
    const soon = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1));
    const later = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 3, 1));
    const expiring = async (at: Date) =>
      (
        await merchant.post("/cards", {
          number: "4242424242424242",
          exp_month: at.getUTCMonth() + 1,
          exp_year: at.getUTCFullYear(),
        })
      ).body.card.expires_soon;
    expect(await expiring(now)).toBe(true);
    expect(await expiring(soon)).toBe(true);
    expect(await expiring(later)).toBe(false);
  });

  it("tells the scheme of an IIN, and 404 for one no scheme holds", async () => {
    const send = app("ios");
    const visa = await send({ method: "GET", path: "/iins/424242" });
    expect(visa.status).toBe(200);
    expect(decodes.ios.cardInformation.parse(visa.body.card_information).scheme).toBe("visa");
    const amex = await send({ method: "GET", path: "/iins/37828224" });
    expect(amex.body.card_information.scheme).toBe("american-express");
    expectError(await send({ method: "GET", path: "/iins/999999" }), 404, "resource.iin.not-found");
    expectError(await send({ method: "GET", path: "/iins/42" }), 404, "resource.iin.not-found");
  });
});

describe("3DS2 rounds from an app", () => {
  it("authenticates frictionlessly after the fingerprint, through three_d_s_check operations", async () => {
    const { authorize, invoiceId, cardId } = await payment("android", FRICTIONLESS);
    const asked = await authorize(cardId);
    const action = expectAction(asked, "fingerprint-mobile");
    const configuration = decodes.directoryServer.parse(actionValue(action?.value ?? ""));
    expect(configuration).toMatchObject({ messageVersion: "2.2.0", scheme: "visa" });
    // Nothing is charged before the last step.
    expect(await transactionOf(invoiceId)).toMatchObject({
      status: "waiting",
      three_d_s_status: "pending",
      authorized_amount: "0.00",
    });

    expectAction(await authorize(testHandler.fingerprint()), null);
    expect(await transactionOf(invoiceId)).toMatchObject({
      status: "authorized",
      three_d_s_status: "frictionless",
      authorized_amount: "25.00",
    });
    expect(await operationTypes(invoiceId)).toEqual([
      "request",
      "three_d_s_check",
      "three_d_s_check",
      "authorization",
    ]);
  });

  it("goes from the fingerprint to a challenge of the same exchange, and authorizes on Y", async () => {
    const { authorize, invoiceId, cardId } = await payment("ios", CHALLENGE);
    const fingerprint = decodes.directoryServer.parse(
      actionValue(expectAction(await authorize(cardId), "fingerprint-mobile")?.value ?? ""),
    );
    const challenge = decodes.acsChallenge.parse(
      actionValue(expectAction(await authorize(testHandler.fingerprint()), "challenge-mobile")?.value ?? ""),
    );
    expect(challenge.threeDSServerTransID).toBe(fingerprint.threeDSServerTransID);
    expect((await transactionOf(invoiceId)).authorized_amount).toBe("0.00");

    expectAction(await authorize(testHandler.challenge("ios", true)), null);
    expect(await transactionOf(invoiceId)).toMatchObject({
      status: "authorized",
      three_d_s_status: "challenge-passed",
    });
  });

  it("declines on N with a card error and a failed transaction", async () => {
    const { authorize, invoiceId, cardId } = await payment("android", CHALLENGE);
    await authorize(cardId);
    await authorize(testHandler.fingerprint());
    expectError(await authorize(testHandler.challenge("android", false)), 410, "card.failed-three-d-s");
    expect(await transactionOf(invoiceId)).toMatchObject({
      status: "failed",
      error_code: "card.failed-three-d-s",
      three_d_s_status: "failed",
      authorized_amount: "0.00",
    });
  });

  it("declines the card whose fingerprint fails, after the fingerprint", async () => {
    const { authorize, invoiceId, cardId } = await payment("ios", FINGERPRINT_FAILS);
    expectAction(await authorize(cardId), "fingerprint-mobile");
    expectError(await authorize(testHandler.fingerprint()), 410, "card.failed-three-d-s");
    expect((await transactionOf(invoiceId)).status).toBe("failed");
  });

  it("asks strong authentication of 4000000000003253 from the app, not from the merchant's server", async () => {
    const fromServer = await payment("android", SCA_CUSTOMER_INITIATED);
    const merchantPaid = await merchant.post(`/invoices/${fromServer.invoiceId}/authorize`, {
      source: fromServer.cardId,
    });
    expect(merchantPaid.status).toBe(200);
    expect(merchantPaid.body.customer_action).toEqual({});
    expect(merchantPaid.body.transaction).toMatchObject({
      status: "authorized",
      three_d_s_status: "not-applicable",
    });

    const fromApp = await payment("android", SCA_CUSTOMER_INITIATED);
    expectAction(await fromApp.authorize(fromApp.cardId), "fingerprint-mobile");
    expectAction(await fromApp.authorize(testHandler.fingerprint()), "challenge-mobile");
  });
});

describe("replays of each round", () => {
  it("replays each round's answer for the same Idempotency-Key, and moves nothing twice", async () => {
    const { authorize, invoiceId, cardId } = await payment("ios", CHALLENGE);
    const first = await authorize(cardId);
    const firstAgain = await authorize(cardId, first);
    expect(firstAgain.body).toEqual(first.body);

    const second = await authorize(testHandler.fingerprint());
    expect(await authorize(testHandler.fingerprint(), second)).toEqual(second);

    const third = await authorize(testHandler.challenge("ios", true));
    expect(await authorize(testHandler.challenge("ios", true), third)).toEqual(third);
    // Two rounds asked, one authorization: each retried request moved nothing.
    expect(await operationTypes(invoiceId)).toEqual([
      "request",
      "three_d_s_check",
      "three_d_s_check",
      "three_d_s_check",
      "authorization",
    ]);
  });

  it("answers a replay without a key with where the payment stands, without calling the issuer again", async () => {
    const { authorize, invoiceId, cardId } = await payment("android", CHALLENGE);
    await authorize(cardId);
    // The first request again (a new key): the same round, asked once.
    expectAction(await authorize(cardId), "fingerprint-mobile");
    await authorize(testHandler.fingerprint());
    // The fingerprint's answer again, after the challenge was asked: the challenge, still once.
    expectAction(await authorize(testHandler.fingerprint()), "challenge-mobile");
    expectAction(await authorize(cardId), "challenge-mobile");
    expect(await operationTypes(invoiceId)).toEqual(["request", "three_d_s_check", "three_d_s_check"]);

    expectAction(await authorize(testHandler.challenge("android", true)), null);
    // After the authorization: any answer of this exchange again gets the payment as it is.
    expectAction(await authorize(testHandler.challenge("android", true)), null);
    expectAction(await authorize(testHandler.fingerprint()), null);
    expect((await operationTypes(invoiceId)).filter((type) => type === "authorization")).toHaveLength(1);
  });

  it("answers a replay after a refusal with the same refusal", async () => {
    const { authorize, cardId } = await payment("ios", CHALLENGE);
    await authorize(cardId);
    await authorize(testHandler.fingerprint());
    expectError(await authorize(testHandler.challenge("ios", false)), 410, "card.failed-three-d-s");
    expectError(await authorize(testHandler.challenge("ios", false)), 410, "card.failed-three-d-s");
    expectError(await authorize(testHandler.challenge("ios", true)), 410, "card.failed-three-d-s");
  });
});

describe("a round cut by a crash", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is settled by the recovery job as the gateway recorded it, and the retry gets the next action", async () => {
    const { authorize, invoiceId, cardId } = await payment("android", CHALLENGE);
    await authorize(cardId);
    // The fingerprint's answer: its reservation commits (with the answer), the settlement is cut.
    const send = dynamo.send.bind(dynamo);
    let transactions = 0;
    vi.spyOn(dynamo, "send").mockImplementation(((command: { constructor: { name: string } }) => {
      if (command.constructor.name === "TransactWriteCommand" && ++transactions === 2) {
        return Promise.reject(new Error("process killed"));
      }
      return send(command as never);
    }) as never);
    const cut = await authorize(testHandler.fingerprint());
    expect(cut.status).toBe(500);
    vi.restoreAllMocks();
    expect(await operationTypes(invoiceId)).toEqual(["request", "three_d_s_check"]);

    vi.spyOn(clock, "now").mockReturnValue(new Date(Date.now() + OPERATION_LEASE_MS + 1000));
    expect(await recoverReservations({ onlyScope: local.project.sandbox.project_id })).toMatchObject({
      found: 1,
      settled: 1,
    });
    expect(await operationTypes(invoiceId)).toEqual(["request", "three_d_s_check", "three_d_s_check"]);
    // The app retries with the same key (a 5xx released it): the challenge the gateway asked for.
    expectAction(await authorize(testHandler.fingerprint(), cut), "challenge-mobile");
    expectAction(await authorize(testHandler.challenge("android", true)), null);
    expect((await transactionOf(invoiceId)).status).toBe("authorized");
  });
});

describe("gway_req_ sources", () => {
  it("takes an answer only for a round its payment asked for", async () => {
    const waiting = await payment("android", CHALLENGE);
    await waiting.authorize(waiting.cardId);
    // A challenge result for a payment that waits for its fingerprint: not its step.
    const early = await waiting.authorize(testHandler.challenge("android", true));
    expectError(early, 400, "request.validation.invalid-source");
    expect(early.body.invalid_fields).toEqual([expect.objectContaining({ name: "source" })]);
    expect((await transactionOf(waiting.invoiceId)).status).toBe("waiting");

    // An invoice with no payment yet, and a payment that needed no 3DS.
    const fresh = await payment("android", CHALLENGE);
    expectError(await fresh.authorize(testHandler.fingerprint()), 400, "request.validation.invalid-source");
    expect(await transactionOf(fresh.invoiceId)).toBeNull();
    const plain = await payment("android", "4242424242424242");
    expectAction(await plain.authorize(plain.cardId), null);
    expectError(await plain.authorize(testHandler.fingerprint()), 400, "request.validation.invalid-source");
  });

  it("refuses a browser's answer bound to another payment's fingerprint page", async () => {
    const web = (invoiceId: string, source: string) =>
      app("android")({
        method: "POST",
        path: `/invoices/${invoiceId}/capture`,
        body: { source, enable_three_d_s_2: true, device: { channel: "web" } },
      });
    const first = await payment("android", CHALLENGE);
    const second = await payment("android", CHALLENGE);
    const firstPage = expectAction(await web(first.invoiceId, first.cardId), "fingerprint")?.value ?? "";
    const secondPage = expectAction(await web(second.invoiceId, second.cardId), "fingerprint")?.value ?? "";
    expect(firstPage).not.toBe(secondPage);

    const foreign = await web(second.invoiceId, testHandler.fingerprintTimeout(firstPage));
    expectError(foreign, 400, "request.validation.invalid-source");
    expect(foreign.body.message).toContain("another payment");
    // Its own page's answer goes on: the timeout falls back to the challenge page.
    expectAction(await web(second.invoiceId, testHandler.fingerprintTimeout(secondPage)), "url");
  });

  const MALFORMED: [string, string][] = [
    ["not base64", "gway_req_%%%not-base64%%%"],
    ["empty", "gway_req_"],
    ["not UTF-8", `gway_req_${Buffer.from([0xff, 0xfe, 0xfd]).toString("base64")}`],
    ["no JSON envelope", `gway_req_${Buffer.from("hello").toString("base64")}`],
    ["an envelope without body", gatewayRequest({ url: "https://example.com" } as never)],
    [
      "an envelope with unknown keys",
      `gway_req_${Buffer.from(JSON.stringify({ body: "{}", extra: 1 })).toString("base64")}`,
    ],
    ["a body that is not JSON", gatewayRequest({ body: "transStatus=Y" })],
    ["a body that answers nothing", gatewayRequest({ body: '{"transStatus":"maybe"}' })],
    ["an SDK answer from no app", gatewayRequest({ body: '{"deviceChannel":"browser","sdkAppID":""}' })],
    ["longer than 16,384 characters", `gway_req_${"A".repeat(16_384)}`],
  ];

  it.each(MALFORMED)("refuses %s with a 400 naming source, and writes nothing", async (_, source) => {
    const { authorize, invoiceId, cardId } = await payment("ios", CHALLENGE);
    await authorize(cardId);
    const before = await transactionOf(invoiceId);
    const refused = await authorize(source);
    expectError(refused, 400, "request.validation.invalid-source");
    expect(refused.body.invalid_fields).toEqual([expect.objectContaining({ name: "source" })]);
    expect(await transactionOf(invoiceId)).toEqual(before);
  });
});

describe("a customer token verified from an app (PUT /customers/{c}/tokens/{t})", () => {
  async function pendingToken(platform: Platform, number: string) {
    const send = app(platform);
    const cardId = await tokenize(send, platform, number);
    const customer = await merchant.post("/customers", { email: "ada@example.com" });
    const customerId = customer.body.customer.id as string;
    const token = await merchant.post(`/customers/${customerId}/tokens`, { verify: true });
    expect(token.body.token.verification_status).toBe("pending");
    const tokenId = token.body.token.id as string;
    const assign = (source: string, retryOf?: MobileResponse) =>
      send({
        method: "PUT",
        path: `/customers/${customerId}/tokens/${tokenId}`,
        body: {
          source,
          verify: true,
          enable_three_d_s_2: true,
          third_party_sdk_version: "2.2.0",
          metadata: { from: "app" },
          device: deviceOf(platform),
        },
        ...(retryOf ? { retryOf } : {}),
      });
    return { assign, cardId, customerId, tokenId };
  }

  it("goes through the fingerprint and the challenge, then is chargeable", async () => {
    const { assign, cardId, customerId, tokenId } = await pendingToken("ios", CHALLENGE);
    const fingerprint = await assign(cardId);
    expectAction(fingerprint, "fingerprint-mobile");
    decodes.ios.token.parse(fingerprint.body.token);
    expect(fingerprint.body.token.verification_status).toBe("pending");
    // Replayed with its key: the same answer.
    expect(await assign(cardId, fingerprint)).toEqual(fingerprint);

    expectAction(await assign(testHandler.fingerprint()), "challenge-mobile");
    const verified = await assign(testHandler.challenge("ios", true));
    expectAction(verified, null);
    decodes.ios.token.parse(verified.body.token);
    decodes.android.token.parse(verified.body.token);
    expect(verified.body.token).toMatchObject({ verification_status: "success", card_id: cardId });
    // The answer again (no key): the token as it is. The app's metadata changed nothing.
    expectAction(await assign(testHandler.challenge("ios", true)), null);
    const stored = await merchant.get(`/customers/${customerId}/tokens/${tokenId}`);
    expect(stored.body.token).toMatchObject({ is_chargeable: true, metadata: {} });
  });

  it("fails on N with the card error, and the same error to its replay", async () => {
    const { assign, cardId } = await pendingToken("android", CHALLENGE);
    await assign(cardId);
    await assign(testHandler.fingerprint());
    expectError(await assign(testHandler.challenge("android", false)), 410, "card.failed-three-d-s");
    expectError(await assign(testHandler.challenge("android", false)), 410, "card.failed-three-d-s");
  });

  it("verifies without 3DS from the merchant's server, as before", async () => {
    const { cardId, customerId, tokenId } = await pendingToken("android", CHALLENGE);
    const fromServer = await merchant.put(`/customers/${customerId}/tokens/${tokenId}`, { source: cardId });
    expect(fromServer.status).toBe(200);
    expect(fromServer.body).toMatchObject({ customer_action: {}, token: { verification_status: "success" } });
  });
});

describe("what the public key may do", () => {
  it("cannot charge a customer's saved token", async () => {
    const customer = await merchant.post("/customers", {});
    const card = await merchant.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2031 });
    const token = await merchant.post(`/customers/${customer.body.customer.id}/tokens`, {
      source: card.body.card.id,
    });
    const invoice = await merchant.post("/invoices", {
      name: "Order",
      amount: "5.00",
      currency: "EUR",
      customer_id: customer.body.customer.id,
    });
    const refused = await app("ios")({
      method: "POST",
      path: `/invoices/${invoice.body.invoice.id}/authorize`,
      body: authorization("ios", token.body.token.id),
    });
    expectError(refused, 403, "request.authentication.private-key-required");
    expect(await transactionOf(invoice.body.invoice.id)).toBeNull();
  });
});
