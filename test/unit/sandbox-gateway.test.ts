import { describe, expect, it } from "vitest";
import type { AuthorizeRequest, CardCredentials } from "../../shared/gateways/connector.ts";
import { SANDBOX_TEST_CARDS, sandboxConnector as sandbox } from "../../shared/gateways/sandbox.ts";

const CHALLENGE_URL = "https://checkout.example.com/three-d-s/tr_1";

function card(number: string, cvc: string | null = "123"): CardCredentials {
  return { number, expMonth: 12, expYear: 2030, cvc, name: "Ada Lovelace" };
}

function authorization(number: string, change: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    reference: "tr_1",
    amount: "10.00",
    currency: "USD",
    card: card(number),
    incremental: false,
    threeDS: { challengeUrl: CHALLENGE_URL },
    ...change,
  };
}

const SUCCESS_CARDS = [
  "4242424242424242",
  "5555555555554444",
  "378282246310005",
  "30123456789019",
  "3530111333300000",
  "6011111111111117",
];

/** Authorizes, then captures the whole amount. */
async function authorizeAndCapture(number: string) {
  const authorized = await sandbox.authorize(authorization(number));
  if (authorized.status !== "approved") throw new Error(`not approved: ${JSON.stringify(authorized)}`);
  const captured = await sandbox.capture({
    gatewayReference: authorized.gatewayReference,
    amount: "10.00",
    currency: "USD",
  });
  return { authorized, captured };
}

describe("the sandbox card connector", () => {
  it("knows every card of the reference's test-card table, and nothing else", () => {
    expect(Object.keys(SANDBOX_TEST_CARDS).sort()).toEqual(
      [
        ...SUCCESS_CARDS,
        "4000000000000002",
        "4000000000000010",
        "4000000000000028",
        "4000000000000036",
        "4000000000000044",
        "4000000000000069",
        "4000000000000077",
        "4000000000000101",
        "4000000000003055",
        "4000000000003063",
        "4000000000003220",
        "4000000000002180",
        "4000000000002206",
      ].sort(),
    );
  });

  it.each(SUCCESS_CARDS)(
    "approves %s through authorization, capture, refund, increment and void",
    async (number) => {
      const { authorized, captured } = await authorizeAndCapture(number);
      expect(authorized).toEqual({
        status: "approved",
        gatewayReference: expect.stringContaining("tr_1"),
        checks: { cvc: "passed", avs: "unavailable" },
        threeDS: "not-applicable",
      });
      expect(captured).toEqual({ status: "approved", chargedBack: false });
      const followUp = { gatewayReference: authorized.gatewayReference, amount: "4.00", currency: "USD" };
      expect(await sandbox.refund(followUp)).toEqual({ status: "approved" });
      expect(await sandbox.incrementAuthorization(followUp)).toEqual({ status: "approved" });
      expect(await sandbox.void({ gatewayReference: authorized.gatewayReference })).toEqual({
        status: "approved",
      });
      expect(await sandbox.verifyCard({ reference: "tok_1", card: card(number) })).toMatchObject({
        status: "approved",
        checks: { cvc: "passed", avs: "unavailable" },
      });
    },
  );

  it.each([
    ["4000000000000002", "card.declined"],
    ["4000000000002180", "card.do-not-honor"],
    ["4000000000002206", "card.no-money"],
  ])("declines %s with %s, at authorization and at verification", async (number, errorType) => {
    expect(await sandbox.authorize(authorization(number))).toEqual({
      status: "declined",
      errorType,
      message: expect.any(String),
      checks: { cvc: "passed", avs: "unavailable" },
      threeDS: "not-applicable",
    });
    expect(await sandbox.verifyCard({ reference: "tok_1", card: card(number) })).toMatchObject({
      status: "declined",
      errorType,
    });
  });

  it("authorizes 4000000000000010 but declines its capture", async () => {
    const { authorized, captured } = await authorizeAndCapture("4000000000000010");
    expect(authorized.status).toBe("approved");
    expect(captured).toEqual({
      status: "declined",
      errorType: "gateway.declined",
      message: expect.any(String),
    });
  });

  it("declines 4000000000000028 for its failed CVC check, and approves it when no CVC was sent", async () => {
    const withCvc = {
      status: "declined",
      errorType: "card.failed-cvc",
      checks: { cvc: "failed", avs: "unavailable" },
    };
    expect(await sandbox.authorize(authorization("4000000000000028"))).toMatchObject(withCvc);
    expect(await sandbox.verifyCard({ reference: "tok_1", card: card("4000000000000028") })).toMatchObject(
      withCvc,
    );
    const withoutCvc = authorization("4000000000000028", { card: card("4000000000000028", null) });
    expect(await sandbox.authorize(withoutCvc)).toMatchObject({
      status: "approved",
      checks: { cvc: "unavailable", avs: "unavailable" },
    });
  });

  it("approves 4000000000000036 with its AVS check failed: the merchant decides", async () => {
    expect(await sandbox.authorize(authorization("4000000000000036"))).toMatchObject({
      status: "approved",
      checks: { cvc: "passed", avs: "failed" },
    });
    expect(await sandbox.verifyCard({ reference: "tok_1", card: card("4000000000000036") })).toMatchObject({
      status: "approved",
      checks: { cvc: "passed", avs: "failed" },
    });
  });

  it("declines 4000000000000044 for both failed checks", async () => {
    expect(await sandbox.authorize(authorization("4000000000000044"))).toMatchObject({
      status: "declined",
      errorType: "card.failed-cvc-and-avs",
      checks: { cvc: "failed", avs: "failed" },
    });
    const withoutCvc = authorization("4000000000000044", { card: card("4000000000000044", null) });
    expect(await sandbox.authorize(withoutCvc)).toMatchObject({
      status: "approved",
      checks: { cvc: "unavailable", avs: "failed" },
    });
  });

  it("reports 4000000000000069 as charged back once captured", async () => {
    const { captured } = await authorizeAndCapture("4000000000000069");
    expect(captured).toEqual({ status: "approved", chargedBack: true });
  });

  it("captures 4000000000000077 but declines its refund", async () => {
    const { authorized, captured } = await authorizeAndCapture("4000000000000077");
    expect(captured.status).toBe("approved");
    expect(
      await sandbox.refund({
        gatewayReference: authorized.gatewayReference,
        amount: "10.00",
        currency: "USD",
      }),
    ).toEqual({ status: "declined", errorType: "gateway.declined", message: expect.any(String) });
  });

  it("asks a challenge for 4000000000000101, then approves or declines on the customer's result", async () => {
    expect(await sandbox.authorize(authorization("4000000000000101"))).toEqual({
      status: "customer-action",
      customerAction: { type: "url", value: CHALLENGE_URL, metadata: {} },
      threeDS: "challenge-required",
    });
    const passed = { challengeUrl: CHALLENGE_URL, challengeResult: "approved" as const };
    expect(await sandbox.authorize(authorization("4000000000000101", { threeDS: passed }))).toMatchObject({
      status: "approved",
      threeDS: "challenge-passed",
    });
    const failed = { challengeUrl: CHALLENGE_URL, challengeResult: "failed" as const };
    expect(await sandbox.authorize(authorization("4000000000000101", { threeDS: failed }))).toMatchObject({
      status: "declined",
      errorType: "card.failed-three-d-s",
      threeDS: "failed",
    });
  });

  it.each(["4000000000003055", "4000000000003063"])("authenticates %s frictionlessly", async (number) => {
    expect(await sandbox.authorize(authorization(number))).toMatchObject({
      status: "approved",
      threeDS: "frictionless",
    });
  });

  it("declines 4000000000003220 when its 3DS fingerprint fails", async () => {
    expect(await sandbox.authorize(authorization("4000000000003220"))).toMatchObject({
      status: "declined",
      errorType: "card.failed-three-d-s",
      threeDS: "failed",
    });
  });

  it("runs no 3DS at verification: the 3DS cards verify", async () => {
    for (const number of ["4000000000000101", "4000000000003055", "4000000000003220"]) {
      expect(await sandbox.verifyCard({ reference: "tok_1", card: card(number) }), number).toMatchObject({
        status: "approved",
      });
    }
  });

  it("is deterministic: the same request gives the same outcome", async () => {
    for (const number of Object.keys(SANDBOX_TEST_CARDS)) {
      expect(await sandbox.authorize(authorization(number))).toEqual(
        await sandbox.authorize(authorization(number)),
      );
    }
  });

  it("treats amounts the caller should have refused as bugs, not declines", async () => {
    await expect(sandbox.authorize(authorization("4242424242424242", { amount: "10.001" }))).rejects.toThrow(
      RangeError,
    );
    await expect(sandbox.authorize(authorization("4242424242424242", { amount: "0" }))).rejects.toThrow(
      RangeError,
    );
    await expect(
      sandbox.capture({ gatewayReference: "someone-else's", amount: "1.00", currency: "USD" }),
    ).rejects.toThrow(/sandbox/);
  });
});
