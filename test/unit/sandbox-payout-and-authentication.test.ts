import { describe, expect, it } from "vitest";
import type {
  AuthorizeRequest,
  CardCredentials,
  RecordedOutcome,
  ThreeDSContext,
} from "../../shared/gateways/connector.ts";
import { sandboxGateway } from "../../shared/gateways/sandbox/gateway.ts";
import type { SandboxLedger } from "../../shared/gateways/sandbox/ledger.ts";
import { PAYOUT_DECLINING_CARDS } from "../../shared/gateways/sandbox/payout.ts";

/**
 * The sandbox's payouts to cards and its 3-D Secure without payment, over a ledger kept in memory
 * (the table's contract: the first answer to a reference is kept and found again).
 */
function memoryLedger(): SandboxLedger & { kinds: Map<string, string> } {
  const operations = new Map<string, RecordedOutcome>();
  const kinds = new Map<string, string>();
  return {
    kinds,
    async record(scope, kind, reference, outcome) {
      const key = `${scope}/${reference}`;
      if (!operations.has(key)) {
        operations.set(key, outcome);
        kinds.set(key, kind);
      }
      return operations.get(key) as RecordedOutcome;
    },
    async find(scope, reference) {
      return operations.get(`${scope}/${reference}`);
    },
    async recordIncrement() {},
    async wasIncremented() {
      return false;
    },
    async firstUseOfCard(_scope, _fingerprint, reference) {
      return reference;
    },
  };
}

const card = (number: string): CardCredentials => ({
  number,
  expMonth: 12,
  expYear: 2099,
  cvc: "123",
  name: null,
  fingerprint: `fp-${number}`,
});

const context = (extra: Partial<ThreeDSContext> = {}): ThreeDSContext => ({
  channel: "browser",
  serverTransactionId: "tr_1",
  fingerprintUrl: "https://api.example/3ds/t/fingerprint",
  challengeUrl: "https://api.example/3ds/t",
  returnUrl: "https://api.example/3ds/t/return",
  ...extra,
});

const authorization = (number: string, threeDS: ThreeDSContext, reference = "op_1"): AuthorizeRequest => ({
  scope: "test-proj_1",
  reference,
  amount: "10.00",
  currency: "USD",
  card: card(number),
  incremental: false,
  initiator: "merchant",
  scheme: "visa",
  threeDS,
});

describe("the sandbox's payouts to cards", () => {
  it("credits a card, and keeps the answer under the payout's reference", async () => {
    const ledger = memoryLedger();
    const gateway = sandboxGateway(ledger);
    const request = {
      scope: "test-proj_1",
      reference: "op_p",
      amount: "5.00",
      currency: "USD",
      card: card("4242424242424242"),
    };
    const outcome = await gateway.payout(request);
    expect(outcome).toEqual({ status: "approved", gatewayReference: "sandbox.normal.op_p" });
    expect(ledger.kinds.get("test-proj_1/op_p")).toBe("payout");
    expect(await gateway.lookup({ scope: "test-proj_1", kind: "payout", reference: "op_p" })).toEqual({
      status: "found",
      outcome,
    });
  });

  it.each(Object.entries(PAYOUT_DECLINING_CARDS))("declines a payout to %s with %s", async (number, code) => {
    const outcome = await sandboxGateway(memoryLedger()).payout({
      scope: "s",
      reference: "op",
      amount: "5.00",
      currency: "USD",
      card: card(number),
    });
    expect(outcome).toMatchObject({ status: "declined", errorType: code });
  });

  it("declines a payout to a card that declines every payment with its code, and refuses an amount the currency cannot have", async () => {
    const gateway = sandboxGateway(memoryLedger());
    const base = { scope: "s", amount: "5.00", currency: "USD" };
    expect(await gateway.payout({ ...base, reference: "a", card: card("4000000000002271") })).toMatchObject({
      errorType: "card.lost",
    });
    expect(await gateway.payout({ ...base, reference: "b", card: card("4000000000000002") })).toMatchObject({
      errorType: "card.declined",
    });
    expect(
      await gateway.payout({ ...base, reference: "c", amount: "5.001", card: card("4242424242424242") }),
    ).toMatchObject({
      errorType: "gateway.validation-error",
    });
  });
});

describe("the sandbox's 3-D Secure without payment", () => {
  it("asks for the challenge page, then authenticates with the approved answer, recording no authorization", async () => {
    const ledger = memoryLedger();
    const gateway = sandboxGateway(ledger);
    const first = await gateway.card.authenticate(authorization("4000000000000101", context(), "op_a1"));
    expect(first).toMatchObject({
      status: "customer-action",
      round: "challenge-page",
      customerAction: { type: "url" },
    });
    const second = await gateway.card.authenticate(
      authorization(
        "4000000000000101",
        context({ answer: { kind: "challenge-page", approved: true } }),
        "op_a2",
      ),
    );
    expect(second).toEqual({
      status: "authenticated",
      threeDS: "challenge-passed",
      authenticationReference: "sandbox.authentication.op_a2",
    });
    expect([...ledger.kinds.values()]).toEqual(["authentication", "authentication"]);
  });

  it("declines a failed challenge and a failing fingerprint card", async () => {
    const gateway = sandboxGateway(memoryLedger());
    const refused = await gateway.card.authenticate(
      authorization(
        "4000000000000101",
        context({ answer: { kind: "challenge-page", approved: false } }),
        "x",
      ),
    );
    expect(refused).toMatchObject({
      status: "declined",
      errorType: "card.failed-three-d-s",
      threeDS: "failed",
    });
    const failing = await gateway.card.authenticate(authorization("4000000000003220", context(), "y"));
    expect(failing).toMatchObject({ status: "declined", errorType: "card.failed-three-d-s" });
  });

  it("approves an authorization that carries a completed authentication with its status, without a round", async () => {
    const gateway = sandboxGateway(memoryLedger());
    const asked = await gateway.card.authorize(authorization("4000000000000101", context(), "z1"));
    expect(asked.status).toBe("customer-action");
    const kept = await gateway.card.authorize(
      authorization(
        "4000000000000101",
        context({ authenticated: { status: "challenge-passed", reference: "sandbox.authentication.op" } }),
        "z2",
      ),
    );
    expect(kept).toMatchObject({ status: "approved", threeDS: "challenge-passed" });
  });
});
