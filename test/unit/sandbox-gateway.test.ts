import { beforeEach, describe, expect, it } from "vitest";
import type {
  AuthorizeRequest,
  CardCredentials,
  RecordedOutcome,
  ThreeDSChannel,
  ThreeDSContext,
  ThreeDSRoundAnswer,
} from "../../shared/gateways/connector.ts";
import { sandboxGateway } from "../../shared/gateways/sandbox/gateway.ts";
import type { SandboxLedger } from "../../shared/gateways/sandbox/ledger.ts";
import { SANDBOX_TEST_CARDS } from "../../shared/gateways/sandbox/test-cards.ts";

/**
 * The sandbox's decisions, over a ledger kept in memory (the same contract as the table's, which
 * the integration tests use): the rules here are the test-card table's.
 */
function memoryLedger(): SandboxLedger {
  const operations = new Map<string, RecordedOutcome>();
  const increments = new Set<string>();
  const firstUses = new Map<string, string>();
  return {
    async record(scope, _kind, reference, outcome) {
      const key = `${scope}/${reference}`;
      if (!operations.has(key)) operations.set(key, outcome);
      return operations.get(key) as RecordedOutcome;
    },
    async find(scope, reference) {
      return operations.get(`${scope}/${reference}`);
    },
    async recordIncrement(scope, authorization) {
      increments.add(`${scope}/${authorization}`);
    },
    async wasIncremented(scope, authorization) {
      return increments.has(`${scope}/${authorization}`);
    },
    async firstUseOfCard(scope, fingerprint, reference) {
      const key = `${scope}/${fingerprint}`;
      if (!firstUses.has(key)) firstUses.set(key, reference);
      return firstUses.get(key) as string;
    },
  };
}

const SCOPE = "test-proj_01TESTTESTTESTTESTTESTTEST";
const CHALLENGE_URL = "https://api.example.com/3ds/token";
const FINGERPRINT_URL = `${CHALLENGE_URL}/fingerprint`;
const SERVER_TRANSACTION = "tr_123";

/** The 3DS exchange offered with an attempt, in a channel, with the answer to its last round. */
function context(channel: ThreeDSChannel, answer?: ThreeDSRoundAnswer): ThreeDSContext {
  return {
    channel,
    serverTransactionId: SERVER_TRANSACTION,
    fingerprintUrl: FINGERPRINT_URL,
    challengeUrl: CHALLENGE_URL,
    returnUrl: `${CHALLENGE_URL}/return`,
    ...(answer ? { answer } : {}),
  };
}
const browser = (answer?: ThreeDSRoundAnswer) => context("browser", answer);

/** A `fingerprint-mobile` or `challenge-mobile` value, decoded as the mobile SDKs decode it. */
const decoded = (value: string) => JSON.parse(Buffer.from(value, "base64").toString("utf8"));

let sandbox: ReturnType<typeof sandboxGateway>;
let references = 0;
const reference = () => `op_${++references}`;

beforeEach(() => {
  sandbox = sandboxGateway(memoryLedger());
});

function card(number: string, cvc: string | null = "123"): CardCredentials {
  return { number, expMonth: 12, expYear: 2030, cvc, name: "Ada Lovelace", fingerprint: `fp-${number}` };
}

function authorization(number: string, change: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    scope: SCOPE,
    reference: reference(),
    amount: "10.00",
    currency: "USD",
    card: card(number),
    incremental: false,
    initiator: "merchant",
    scheme: "visa",
    threeDS: browser(),
    ...change,
  };
}

const followUp = (gatewayReference: string, amount = "10.00") => ({
  scope: SCOPE,
  gatewayReference,
  reference: reference(),
  amount,
  currency: "USD",
  authorizedAmount: "10.00",
});

const verification = (number: string) => ({ scope: SCOPE, reference: reference(), card: card(number) });

const SUCCESS_CARDS = [
  "4242424242424242",
  "5555555555554444",
  "378282246310005",
  "30123456789019",
  "3530111333300000",
  "6011111111111117",
];

async function approved(number: string): Promise<string> {
  const outcome = await sandbox.card.authorize(authorization(number));
  if (outcome.status !== "approved") throw new Error(`not approved: ${JSON.stringify(outcome)}`);
  return outcome.gatewayReference;
}

describe("the sandbox card connector", () => {
  it("knows every card of the reference's test-card table and the issue's SCA card, nothing else", () => {
    const declines = ["2180", "2206", "2198", "2214", "2222", "2230", "2248", "2255", "2263", "2271", "2289"];
    expect(Object.keys(SANDBOX_TEST_CARDS).sort()).toEqual(
      [
        ...SUCCESS_CARDS,
        ...declines.map((last) => `400000000000${last}`),
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
        // Issue 14: strong authentication for customer-initiated payments only.
        "4000000000003253",
        "4127969420587632",
        "4000000000001216",
        "4000000000006009",
        "4000000000004301",
        "4000000000000531",
        "4000000000003303",
        "4000000000006223",
        "5337480000007168",
        // Issue 20: Mastercard merchant advice codes 03 and 21; routing's card types and countries.
        "5100000000000032",
        "5100000000000024",
        "4000056655665556",
        "5200828282828210",
        "5105105105105100",
        "4002760000000009",
        "4002500000000009",
        "4008260000000004",
      ].sort(),
    );
  });

  it.each(SUCCESS_CARDS)(
    "approves %s through authorization, capture, refund, increment and void",
    async (number) => {
      const authorized = await sandbox.card.authorize(authorization(number));
      expect(authorized).toEqual({
        status: "approved",
        gatewayReference: expect.stringMatching(/^sandbox\.normal\.op_\d+$/),
        checks: { cvc: "passed", avs: "unavailable" },
        threeDS: "not-applicable",
      });
      const gatewayReference = (authorized as { gatewayReference: string }).gatewayReference;
      expect(await sandbox.capture(followUp(gatewayReference))).toEqual({
        status: "approved",
        chargedBack: false,
      });
      expect(await sandbox.refund(followUp(gatewayReference, "4.00"))).toEqual({ status: "approved" });
      expect(await sandbox.card.incrementAuthorization(followUp(gatewayReference, "4.00"))).toEqual({
        status: "approved",
      });
      expect(await sandbox.void(followUp(gatewayReference))).toEqual({ status: "approved" });
      expect(await sandbox.card.verifyCard(verification(number))).toMatchObject({
        status: "approved",
        checks: { cvc: "passed", avs: "unavailable" },
      });
    },
  );

  it.each([
    ["4000000000000002", "card.declined"],
    ["4000000000002180", "card.do-not-honor"],
    ["4000000000002206", "card.no-money"],
    ["4000000000002198", "card.possible-fraud"],
    ["4000000000002214", "card.expired"],
    ["4000000000002222", "card.stolen"],
    ["4000000000002230", "card.failed-cvc"],
    ["4000000000002248", "card.failed-avs"],
    ["4000000000002255", "card.not-authorized"],
    ["4000000000002263", "card.inactive"],
    ["4000000000002271", "card.lost"],
    ["4000000000002289", "card.region-not-authorized"],
    ["4127969420587632", "card.blacklisted"],
  ])("declines %s with %s, at authorization and at verification", async (number, errorType) => {
    expect(await sandbox.card.authorize(authorization(number))).toEqual({
      status: "declined",
      errorType,
      message: expect.any(String),
      checks: { cvc: "passed", avs: "unavailable" },
      threeDS: "not-applicable",
    });
    expect(await sandbox.card.verifyCard(verification(number))).toMatchObject({
      status: "declined",
      errorType,
    });
  });

  it("authorizes 4000000000000010 but declines its capture", async () => {
    const gatewayReference = await approved("4000000000000010");
    expect(await sandbox.capture(followUp(gatewayReference))).toEqual({
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
    expect(await sandbox.card.authorize(authorization("4000000000000028"))).toMatchObject(withCvc);
    expect(await sandbox.card.verifyCard(verification("4000000000000028"))).toMatchObject(withCvc);
    const withoutCvc = authorization("4000000000000028", { card: card("4000000000000028", null) });
    expect(await sandbox.card.authorize(withoutCvc)).toMatchObject({
      status: "approved",
      checks: { cvc: "unavailable", avs: "unavailable" },
    });
  });

  it("approves 4000000000000036 with its AVS check failed: the merchant decides", async () => {
    const failedAvs = { status: "approved", checks: { cvc: "passed", avs: "failed" } };
    expect(await sandbox.card.authorize(authorization("4000000000000036"))).toMatchObject(failedAvs);
    expect(await sandbox.card.verifyCard(verification("4000000000000036"))).toMatchObject(failedAvs);
  });

  it("declines 4000000000000044 for both failed checks", async () => {
    expect(await sandbox.card.authorize(authorization("4000000000000044"))).toMatchObject({
      status: "declined",
      errorType: "card.failed-cvc-and-avs",
      checks: { cvc: "failed", avs: "failed" },
    });
  });

  it("reports 4000000000000069 as charged back once captured", async () => {
    const gatewayReference = await approved("4000000000000069");
    expect(await sandbox.capture(followUp(gatewayReference))).toEqual({
      status: "approved",
      chargedBack: true,
    });
  });

  it("captures 4000000000000077 but declines its refund", async () => {
    const gatewayReference = await approved("4000000000000077");
    expect((await sandbox.capture(followUp(gatewayReference))).status).toBe("approved");
    expect(await sandbox.refund(followUp(gatewayReference))).toMatchObject({
      status: "declined",
      errorType: "gateway.declined",
    });
  });

  it("asks a challenge for 4000000000000101, then approves or declines on the customer's result", async () => {
    expect(await sandbox.card.authorize(authorization("4000000000000101"))).toEqual({
      status: "customer-action",
      customerAction: { type: "url", value: CHALLENGE_URL, metadata: {} },
      round: "challenge-page",
      threeDS: "challenge-required",
    });
    const passed = browser({ kind: "challenge-page", approved: true });
    expect(
      await sandbox.card.authorize(authorization("4000000000000101", { threeDS: passed })),
    ).toMatchObject({
      status: "approved",
      threeDS: "challenge-passed",
    });
    const failed = browser({ kind: "challenge-page", approved: false });
    expect(
      await sandbox.card.authorize(authorization("4000000000000101", { threeDS: failed })),
    ).toMatchObject({
      status: "declined",
      errorType: "card.failed-three-d-s",
      threeDS: "failed",
    });
  });

  describe("3DS2", () => {
    const app = (answer?: ThreeDSRoundAnswer) => context("app", answer);
    const web = (answer?: ThreeDSRoundAnswer) => context("browser-3ds2", answer);
    const customer = (number: string, threeDS: ThreeDSContext) =>
      sandbox.card.authorize(authorization(number, { initiator: "customer", threeDS }));

    it("asks an app for its SDK's fingerprint with the directory server's data, then decides", async () => {
      const asked = await customer("4000000000003063", app());
      expect(asked).toMatchObject({ status: "customer-action", round: "fingerprint" });
      if (asked.status !== "customer-action") throw new Error("no action");
      expect(asked.customerAction.type).toBe("fingerprint-mobile");
      const configuration = decoded(asked.customerAction.value);
      expect(configuration).toEqual({
        directoryServerID: "A000000003",
        directoryServerPublicKey: expect.stringContaining('"kty":"EC"'),
        threeDSServerTransID: SERVER_TRANSACTION,
        directoryServerRootCAs: [expect.stringMatching(/^MII[A-Za-z0-9+/=]+$/)],
        messageVersion: "2.2.0",
        scheme: "visa",
      });
      expect(await customer("4000000000003063", app({ kind: "fingerprint", completed: true }))).toMatchObject(
        {
          status: "approved",
          threeDS: "frictionless",
        },
      );
    });

    it("goes from the fingerprint to a challenge for the challenge card, and decides on its result", async () => {
      const fingerprinted = await customer("4000000000000101", app({ kind: "fingerprint", completed: true }));
      expect(fingerprinted).toMatchObject({ status: "customer-action", round: "challenge" });
      if (fingerprinted.status !== "customer-action") throw new Error("no action");
      expect(fingerprinted.customerAction.type).toBe("challenge-mobile");
      const challenge = decoded(fingerprinted.customerAction.value);
      expect(Object.keys(challenge).sort()).toEqual([
        "acsReferenceNumber",
        "acsSignedContent",
        "acsTransID",
        "threeDSServerTransID",
      ]);
      expect(challenge.threeDSServerTransID).toBe(SERVER_TRANSACTION);
      expect(challenge.acsSignedContent.split(".")).toHaveLength(3);
      expect(await customer("4000000000000101", app({ kind: "challenge", approved: true }))).toMatchObject({
        status: "approved",
        threeDS: "challenge-passed",
      });
      expect(await customer("4000000000000101", app({ kind: "challenge", approved: false }))).toMatchObject({
        status: "declined",
        errorType: "card.failed-three-d-s",
        threeDS: "failed",
      });
    });

    it("gives a browser with 3DS2 the fingerprint page, then the challenge page", async () => {
      expect(await customer("4000000000000101", web())).toMatchObject({
        status: "customer-action",
        round: "fingerprint",
        customerAction: { type: "fingerprint", value: FINGERPRINT_URL, metadata: {} },
      });
      expect(await customer("4000000000000101", web({ kind: "fingerprint", completed: true }))).toMatchObject(
        {
          status: "customer-action",
          round: "challenge-page",
          customerAction: { type: "url", value: CHALLENGE_URL },
        },
      );
    });

    it("falls back to a challenge when the fingerprint timed out, even for a frictionless card", async () => {
      expect(
        await customer("4000000000003063", app({ kind: "fingerprint", completed: false })),
      ).toMatchObject({ status: "customer-action", round: "challenge" });
    });

    it("declines the failing fingerprint card after its fingerprint", async () => {
      expect(await customer("4000000000003220", app())).toMatchObject({ round: "fingerprint" });
      expect(await customer("4000000000003220", app({ kind: "fingerprint", completed: true }))).toMatchObject(
        { status: "declined", errorType: "card.failed-three-d-s", threeDS: "failed" },
      );
    });

    it("asks strong authentication of 4000000000003253 for customer-initiated payments only", async () => {
      expect(
        await sandbox.card.authorize(authorization("4000000000003253", { threeDS: app() })),
      ).toMatchObject({
        status: "approved",
        threeDS: "not-applicable",
      });
      expect(await customer("4000000000003253", app())).toMatchObject({ round: "fingerprint" });
      expect(await customer("4000000000003253", app({ kind: "fingerprint", completed: true }))).toMatchObject(
        { round: "challenge" },
      );
    });

    it("runs 3DS on a verification only when the caller runs it", async () => {
      expect((await sandbox.card.verifyCard(verification("4000000000000101"))).status).toBe("approved");
      const withThreeDS = { ...verification("4000000000000101"), threeDS: app() };
      expect(await sandbox.card.verifyCard(withThreeDS)).toMatchObject({
        status: "customer-action",
        round: "fingerprint",
      });
      const answered = {
        ...verification("4000000000000101"),
        threeDS: app({ kind: "challenge", approved: false }),
      };
      expect(await sandbox.card.verifyCard(answered)).toMatchObject({
        status: "declined",
        errorType: "card.failed-three-d-s",
      });
    });
  });

  it.each(["4000000000003055", "4000000000003063"])("authenticates %s frictionlessly", async (number) => {
    expect(await sandbox.card.authorize(authorization(number))).toMatchObject({
      status: "approved",
      threeDS: "frictionless",
    });
  });

  it("declines 4000000000003220 when its 3DS fingerprint fails", async () => {
    expect(await sandbox.card.authorize(authorization("4000000000003220"))).toMatchObject({
      status: "declined",
      errorType: "card.failed-three-d-s",
      threeDS: "failed",
    });
  });

  it("runs no 3DS at verification: the 3DS cards verify", async () => {
    for (const number of ["4000000000000101", "4000000000003055", "4000000000003220"]) {
      expect(await sandbox.card.verifyCard(verification(number)), number).toMatchObject({
        status: "approved",
      });
    }
  });

  it("verifies 4000000000001216 but declines any payment with it", async () => {
    expect(await sandbox.card.verifyCard(verification("4000000000001216"))).toMatchObject({
      status: "approved",
    });
    expect(await sandbox.card.authorize(authorization("4000000000001216"))).toMatchObject({
      status: "declined",
      errorType: "card.declined",
    });
  });

  it.each([
    ["4000000000006009", "card.no-money"],
    ["4000000000004301", "card.expired"],
  ])(
    "accepts the first request made with %s, then declines every later authorization with %s",
    async (number, errorType) => {
      const first = authorization(number);
      expect((await sandbox.card.authorize(first)).status).toBe("approved");
      // The first request repeated is still the first request: the provider answers it the same.
      expect((await sandbox.card.authorize(first)).status).toBe("approved");
      expect(await sandbox.card.authorize(authorization(number))).toMatchObject({
        status: "declined",
        errorType,
      });
      expect(await sandbox.card.authorize(authorization(number))).toMatchObject({
        status: "declined",
        errorType,
      });
    },
  );

  it("counts a verification as the first request of 4000000000006009", async () => {
    expect((await sandbox.card.verifyCard(verification("4000000000006009"))).status).toBe("approved");
    expect(await sandbox.card.authorize(authorization("4000000000006009"))).toMatchObject({
      errorType: "card.no-money",
    });
  });

  it("authorizes 4000000000000531 and 4000000000003303 but declines their increments", async () => {
    expect(
      await sandbox.card.incrementAuthorization(followUp(await approved("4000000000000531"), "1.00")),
    ).toMatchObject({
      status: "declined",
      errorType: "gateway.declined",
    });
    expect(
      await sandbox.card.incrementAuthorization(followUp(await approved("4000000000003303"), "1.00")),
    ).toMatchObject({
      status: "declined",
      errorType: "card.no-money",
    });
  });

  it("captures 4000000000006223, but not once its authorization was incremented", async () => {
    expect((await sandbox.capture(followUp(await approved("4000000000006223")))).status).toBe("approved");
    const incremented = await approved("4000000000006223");
    expect((await sandbox.card.incrementAuthorization(followUp(incremented, "1.00"))).status).toBe(
      "approved",
    );
    expect(await sandbox.capture(followUp(incremented, "11.00"))).toMatchObject({
      status: "declined",
      errorType: "gateway.declined",
    });
  });

  it("declines payments with 5337480000007168, advising not to retry, but verifies it", async () => {
    expect(await sandbox.card.authorize(authorization("5337480000007168"))).toMatchObject({
      status: "declined",
      advice: "do-not-retry",
    });
    expect((await sandbox.card.verifyCard(verification("5337480000007168"))).status).toBe("approved");
  });

  it("answers a repeated reference with its first answer, and finds it again by lookup", async () => {
    const first = authorization("4000000000000101");
    const asked = await sandbox.card.authorize(first);
    expect(asked.status).toBe("customer-action");
    // Even with the challenge answered since, the same reference is the same operation.
    const repeat = { ...first, threeDS: browser({ kind: "challenge-page", approved: true }) };
    expect(await sandbox.card.authorize(repeat)).toEqual(asked);
    expect(await sandbox.lookup({ scope: SCOPE, kind: "authorization", reference: first.reference })).toEqual(
      {
        status: "found",
        outcome: asked,
      },
    );
    expect(await sandbox.lookup({ scope: SCOPE, kind: "capture", reference: "op_never" })).toEqual({
      status: "not-found",
    });
  });

  it("keeps each environment's operations apart", async () => {
    const made = authorization("4242424242424242");
    await sandbox.card.authorize(made);
    const elsewhere = {
      scope: "proj_01OTHEROTHEROTHEROTHEROTH",
      kind: "authorization" as const,
      reference: made.reference,
    };
    expect(await sandbox.lookup(elsewhere)).toEqual({ status: "not-found" });
  });

  it("refuses an amount it cannot take as a validation error, not a fault", async () => {
    for (const amount of ["10.001", "0", "0.00"]) {
      expect(
        await sandbox.card.authorize(authorization("4242424242424242", { amount })),
        amount,
      ).toMatchObject({
        status: "declined",
        errorType: "gateway.validation-error",
      });
    }
    const gatewayReference = await approved("4242424242424242");
    expect(await sandbox.capture(followUp(gatewayReference, "0"))).toMatchObject({
      status: "declined",
      errorType: "gateway.validation-error",
    });
  });

  it("fails (throws) on a gateway reference it never issued", async () => {
    await expect(sandbox.capture(followUp("someone-else's"))).rejects.toThrow(/sandbox/);
  });
});
