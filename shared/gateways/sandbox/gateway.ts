import { clock } from "../../clock.ts";
import { amountProblemIn, isZeroAmount } from "../../money.ts";
import type {
  AuthenticateOutcome,
  AuthorizeOutcome,
  AuthorizeRequest,
  CaptureOutcome,
  CardConnector,
  CardOperations,
  Declined,
  FollowUpRequest,
  NativeApmOperations,
  OperationOutcome,
  PaymentConnector,
  PayoutOutcome,
  VerifyOutcome,
} from "../connector.ts";
import { OutcomeUnknown, ProviderUnreachable } from "../connector.ts";
import {
  balanceOf,
  giftCardOf,
  giftCardVouchers,
  giveBack as giveBackToGiftCard,
  spend as spendGiftCard,
  spentOn,
} from "./gift-cards.ts";
import { type SandboxLedger, tableLedger } from "./ledger.ts";
import { decideNativePayment } from "./native-apm.ts";
import { decidePayout } from "./payout.ts";
import { delayed, listed, type Rehearsal } from "./rehearsal.ts";
import {
  cardDecision,
  checksFor,
  declined,
  firstUseOnly,
  followUpFor,
  gatewayReference,
  parseGatewayReference,
  type TestCardBehaviour,
  testCardBehaviour,
} from "./test-cards.ts";
import { askCardholder, decideThreeDS } from "./three-d-s.ts";

/**
 * The `sandbox` gateway, for cards and its native APM: no provider behind it, card outcomes decided
 * by the card number as the test-card table lists them (`test-cards.ts`), the APM's by the values
 * the customer gives (`native-apm.ts`), and every answer remembered like a provider remembers it
 * (`ledger.ts`): a repeated reference gets its first answer again, and `lookup` finds it.
 *
 * CVC and AVS failures: a failed CVC check declines the authorization or verification
 * (`card.failed-cvc`, `card.failed-cvc-and-avs` when AVS fails too), as issuers decline a wrong
 * security code; a failed AVS check alone approves it with `avs: failed`, leaving the merchant to
 * decide. A CVC check can only fail when a CVC was sent: without one it is `unavailable`.
 *
 * 3-D Secure happens at authorization, and at a verification when the caller runs it (a browser or
 * app verifying a customer token): the 3DS test cards ask for the rounds `three-d-s.ts` describes,
 * one customer action per attempt, until the answers let the issuer decide. An authentication
 * without payment (`authenticate`) runs the same rounds and reserves nothing; the authorization
 * that follows it keeps its result (`ThreeDSContext.authenticated`).
 *
 * Payouts credit the card (`payout.ts`: the cards that decline them).
 *
 * What the follow-ups of an approved authorization do (capture, refund, increment of a test card)
 * is carried in the gateway reference it returns: `sandbox.<follow-up behaviour>.<reference>`.
 *
 * A configuration's rehearsal settings (`rehearsal.ts`) add an outage, latency, soft declines of
 * some cards and lost answers on top of what the cards do.
 */
export function sandboxGateway(
  ledger: SandboxLedger = tableLedger,
  rehearsal?: Rehearsal,
): CardConnector & {
  card: {
    authenticate: NonNullable<CardOperations["authenticate"]>;
    balance: NonNullable<CardOperations["balance"]>;
  };
  nativeApm: NativeApmOperations;
  payout: NonNullable<PaymentConnector["payout"]>;
} {
  /** Before every operation: the rehearsal's latency, and its outage (nothing is done nor recorded). */
  const reach = async () => {
    await delayed(rehearsal);
    if (rehearsal?.outage) throw new ProviderUnreachable("The sandbox configuration rehearses an outage.");
  };

  /** An amount the provider cannot take is refused as such (a value, not a fault). */
  const invalidAmount = (amount: string, currency: string): Declined | undefined => {
    const problem =
      amountProblemIn(amount, currency) ?? (isZeroAmount(amount) ? "must be above zero" : undefined);
    return problem ? declined("gateway.validation-error", `The amount ${problem}.`) : undefined;
  };

  /** Whether a card that only accepts its first request has been used before this one. */
  const laterUse = async (
    behaviour: TestCardBehaviour,
    request: { scope: string; reference: string; card: { fingerprint: string } },
  ): Promise<boolean> => {
    if (!firstUseOnly(behaviour)) return false;
    const first = await ledger.firstUseOfCard(request.scope, request.card.fingerprint, request.reference);
    return first !== request.reference;
  };

  async function decideAuthorization(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
    const checks = checksFor(testCardBehaviour(request.card.number), request.card.cvc !== null);
    const refusedAmount = invalidAmount(request.amount, request.currency);
    if (refusedAmount) return { ...refusedAmount, checks, threeDS: "not-applicable" };
    const behaviour = testCardBehaviour(request.card.number);
    const refusal = cardDecision(behaviour, checks, {
      kind: "authorization",
      laterUse: await laterUse(behaviour, request),
    });
    if (refusal) return { ...refusal, checks, threeDS: "not-applicable" };

    const threeDS = decideThreeDS(behaviour, request.initiator, request.scheme, request.threeDS);
    if (threeDS.next === "act") {
      return askCardholder(threeDS);
    }
    if (threeDS.next === "decline") {
      return { ...declined("card.failed-three-d-s"), checks, threeDS: "failed" };
    }
    // The rehearsal's soft decline comes from the issuer, after any authentication.
    if (rehearsal && listed(rehearsal.softDeclines, request.card.number)) {
      return {
        ...declined("card.do-not-honor", "The sandbox configuration rehearses a soft decline of this card."),
        checks,
        threeDS: threeDS.status,
      };
    }
    // A gift card's authorization takes its amount from the card's balance, in the card's currency.
    const vouchers = giftCardVouchers(request.card.number);
    if (vouchers) {
      const refusedGiftCard =
        vouchers[0]?.currency !== request.currency
          ? declined("card.not-supported", `This gift card holds ${vouchers[0]?.currency} only.`)
          : (await spendGiftCard(
                request.scope,
                request.card,
                request.reference,
                request.amount,
                clock.now(),
              )) === "insufficient"
            ? declined("card.no-money", "The gift card's balance is below the amount.")
            : undefined;
      if (refusedGiftCard) return { ...refusedGiftCard, checks, threeDS: threeDS.status };
    }
    return {
      status: "approved",
      gatewayReference: gatewayReference(followUpFor(behaviour), request.reference),
      checks,
      threeDS: threeDS.status,
    };
  }

  async function decideCapture(request: FollowUpRequest): Promise<CaptureOutcome> {
    const refusedAmount = invalidAmount(request.amount, request.currency);
    if (refusedAmount) return refusedAmount;
    const { followUp, authorization } = parseGatewayReference(request.gatewayReference);
    if (followUp === "capture-fails") {
      return declined("gateway.declined", "The sandbox gateway declined the capture of this test card.");
    }
    if (
      followUp === "incremented-capture-fails" &&
      (await ledger.wasIncremented(request.scope, authorization))
    ) {
      return declined(
        "gateway.declined",
        "The sandbox gateway declined the capture of an incremented authorization.",
      );
    }
    return { status: "approved", chargedBack: followUp === "charged-back" };
  }

  async function decideIncrement(request: FollowUpRequest): Promise<OperationOutcome> {
    const refusedAmount = invalidAmount(request.amount, request.currency);
    if (refusedAmount) return refusedAmount;
    const { followUp, authorization } = parseGatewayReference(request.gatewayReference);
    if (followUp === "increment-fails") {
      return declined("gateway.declined", "The sandbox gateway declined the increment of this test card.");
    }
    if (followUp === "increment-no-money") return declined("card.no-money");
    if (followUp === "incremented-capture-fails") {
      await ledger.recordIncrement(request.scope, authorization, request.reference);
    }
    return { status: "approved" };
  }

  return {
    card: {
      async authorize(request) {
        await reach();
        const outcome = (await ledger.record(
          request.scope,
          "authorization",
          request.reference,
          await decideAuthorization(request),
        )) as AuthorizeOutcome;
        if (rehearsal && listed(rehearsal.unknownOutcomes, request.card.number)) {
          throw new OutcomeUnknown(
            "The sandbox configuration rehearses a lost answer (a timeout after sending).",
          );
        }
        return outcome;
      },

      async incrementAuthorization(request) {
        await reach();
        return (await ledger.record(
          request.scope,
          "increment",
          request.reference,
          await decideIncrement(request),
        )) as OperationOutcome;
      },

      async authenticate(request) {
        await reach();
        const behaviour = testCardBehaviour(request.card.number);
        const threeDS = decideThreeDS(behaviour, request.initiator, request.scheme, request.threeDS);
        const outcome: AuthenticateOutcome =
          threeDS.next === "act"
            ? askCardholder(threeDS)
            : threeDS.next === "decline"
              ? { ...declined("card.failed-three-d-s"), threeDS: "failed" }
              : {
                  status: "authenticated",
                  threeDS: threeDS.status,
                  authenticationReference: `sandbox.authentication.${request.reference}`,
                };
        return (await ledger.record(
          request.scope,
          "authentication",
          request.reference,
          outcome,
        )) as AuthenticateOutcome;
      },

      async balance(request) {
        await reach();
        const vouchers = giftCardOf(request.card.iin, request.card.last4);
        if (!vouchers) return { status: "none" };
        const { vouchers: left, available_balance } = balanceOf(
          vouchers,
          await spentOn(request.scope, request.card.fingerprint),
          clock.now(),
        );
        return { status: "balance", vouchers: left, available: available_balance };
      },

      async verifyCard(request) {
        await reach();
        const behaviour = testCardBehaviour(request.card.number);
        const checks = checksFor(behaviour, request.card.cvc !== null);
        const refusal = cardDecision(behaviour, checks, {
          kind: "verification",
          laterUse: await laterUse(behaviour, request),
        });
        // 3DS only when the caller runs it: the shopper is there, so the verification is theirs.
        const threeDS = request.threeDS
          ? decideThreeDS(behaviour, "customer", request.scheme ?? null, request.threeDS)
          : ({ next: "approve", status: "not-applicable" } as const);
        const outcome: VerifyOutcome = refusal
          ? { ...refusal, checks }
          : threeDS.next === "act"
            ? askCardholder(threeDS)
            : threeDS.next === "decline"
              ? { ...declined("card.failed-three-d-s"), checks }
              : {
                  status: "approved",
                  gatewayReference: gatewayReference(followUpFor(behaviour), request.reference),
                  checks,
                };
        return (await ledger.record(
          request.scope,
          "verification",
          request.reference,
          outcome,
        )) as VerifyOutcome;
      },
    },

    nativeApm: {
      async pay(request) {
        const refusedAmount = invalidAmount(request.amount, request.currency);
        const outcome = refusedAmount ?? decideNativePayment(request);
        return (await ledger.record(request.scope, "native-payment", request.reference, outcome)) as Awaited<
          ReturnType<NativeApmOperations["pay"]>
        >;
      },
    },

    async payout(request) {
      await reach();
      const refusedAmount = invalidAmount(request.amount, request.currency);
      const outcome = await ledger.record(
        request.scope,
        "payout",
        request.reference,
        refusedAmount ?? decidePayout(request),
      );
      if (rehearsal && listed(rehearsal.unknownOutcomes, request.card.number)) {
        throw new OutcomeUnknown(
          "The sandbox configuration rehearses a lost answer (a timeout after sending).",
        );
      }
      return outcome as PayoutOutcome;
    },

    async capture(request) {
      await reach();
      return (await ledger.record(
        request.scope,
        "capture",
        request.reference,
        await decideCapture(request),
      )) as CaptureOutcome;
    },

    async void(request) {
      await reach();
      const { authorization } = parseGatewayReference(request.gatewayReference);
      const outcome = (await ledger.record(request.scope, "void", request.reference, {
        status: "approved",
      })) as OperationOutcome;
      if (outcome.status === "approved") {
        await giveBackToGiftCard(request.scope, authorization, { reference: request.reference });
      }
      return outcome;
    },

    async refund(request) {
      await reach();
      const refusedAmount = invalidAmount(request.amount, request.currency);
      const outcome: OperationOutcome =
        refusedAmount ??
        (parseGatewayReference(request.gatewayReference).followUp === "refund-declined"
          ? declined("gateway.declined", "The sandbox gateway declined the refund of this test card.")
          : { status: "approved" });
      const recorded = (await ledger.record(
        request.scope,
        "refund",
        request.reference,
        outcome,
      )) as OperationOutcome;
      if (recorded.status === "approved") {
        await giveBackToGiftCard(
          request.scope,
          parseGatewayReference(request.gatewayReference).authorization,
          {
            reference: request.reference,
            amount: request.amount,
          },
        );
      }
      return recorded;
    },

    async lookup(request) {
      const outcome = await ledger.find(request.scope, request.reference);
      return outcome ? { status: "found", outcome } : { status: "not-found" };
    },
  };
}

/** The connector every sandbox configuration goes through (cards and the native APM). */
export const sandboxConnector = sandboxGateway();
