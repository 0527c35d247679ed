import { addAmounts } from "../../money.ts";
import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CaptureOutcome,
  CardConnector,
  CheckResult,
  CheckResults,
  Declined,
  FollowUpRequest,
  LookupOutcome,
  LookupRequest,
  OperationOutcome,
  ThreeDSContext,
  ThreeDSStatus,
  VerifyOutcome,
  VerifyRequest,
  VoidRequest,
} from "../connector.ts";
import { NO_CHECKS, OutcomeUnknown, ProviderUnreachable } from "../connector.ts";
import { callProvider, providerTimeoutMs } from "../provider-http.ts";
import { adyenDecline } from "./declines.ts";
import { findNotification } from "./notifications.ts";
import {
  type AdyenError,
  adyenAmount,
  adyenCheckoutUrl,
  type ModificationResponse,
  type PaymentResponse,
} from "./wire.ts";

/**
 * The `adyen` connector: card payments through Adyen's Checkout API (v71) for the merchant's
 * account (`merchant_account`, `api_key`).
 *
 * - authorize: `/payments` with the card (opened from our vault for this call), manual capture
 *   (`additionalData.manualCapture`), `PreAuth` when increments are asked for. A customer-initiated
 *   payment the issuer wants authenticated gets Adyen's redirect as our `customer_action` (`url`);
 *   Adyen sends the cardholder back to our return address with `redirectResult`, which the next
 *   attempt gives to `/payments/details`. A merchant-initiated one is sent `ContAuth` with the card's
 *   network transaction id (`networkTxReference`).
 * - capture, cancel, refund, amount update: Adyen answers `received` and decides later: the outcome
 *   comes in its webhook (`notifications.ts` keeps each one), which settles the operation.
 * - Every request carries `Idempotency-Key`, our operation's reference, also sent as Adyen's
 *   `reference`, so Adyen answers a repeat with its first result.
 * - lookup: what Adyen's webhooks said of the reference (Checkout has no search); nothing yet is
 *   "cannot tell" (the operation stays reserved until Adyen says).
 */
export interface AdyenSettings {
  apiKey: string;
  merchantAccount: string;
  liveUrlPrefix?: string;
  sandbox: boolean;
  configurationId: string;
}

type AdyenResult<T> = { ok: T } | { error: AdyenError | undefined; status: number };

export function adyenConnector(settings: AdyenSettings): CardConnector {
  const base = () => adyenCheckoutUrl(settings.sandbox, settings.liveUrlPrefix);

  const send = async <T>(
    path: string,
    body: Record<string, unknown>,
    idempotencyKey: string,
  ): Promise<AdyenResult<T>> => {
    const answer = await callProvider({
      url: `${base()}${path}`,
      method: "POST",
      headers: {
        "x-api-key": settings.apiKey,
        "content-type": "application/json",
        "idempotency-key": idempotencyKey,
      },
      body: JSON.stringify(body),
      timeoutMs: providerTimeoutMs(),
    });
    if (answer.status >= 200 && answer.status < 300) return { ok: answer.body as T };
    // Adyen cannot tell whether it processed the request: the operation stays reserved until it can.
    if (answer.status >= 500) throw new OutcomeUnknown(`Adyen answered ${answer.status} to POST ${path}`);
    if (answer.status === 429)
      throw new ProviderUnreachable(`Adyen rate-limited POST ${path}`, "gateway.rate-limited");
    return { error: answer.body as AdyenError | undefined, status: answer.status };
  };

  const refused = (result: { error: AdyenError | undefined; status: number }): Declined => ({
    status: "declined",
    errorType: "gateway.validation-error",
    message:
      result.status === 401 || result.status === 403
        ? "Adyen refused the gateway configuration's API key: check settings[api_key] and settings[merchant_account]."
        : `Adyen refused the request: ${result.error?.message ?? `HTTP ${result.status}`} (${result.error?.errorCode ?? "no code"}).`,
  });

  const unpayable = (amount: string, currency: string): Declined => ({
    status: "declined",
    errorType: "gateway.validation-error",
    message: `Adyen cannot take ${amount} ${currency.toUpperCase()} in its minor units.`,
  });

  /**
   * The cardholder is back from Adyen's authentication page: `/payments/details` with the
   * `redirectResult` Adyen sent back tells how the payment ended; without one, they did not finish.
   */
  async function completeAuthentication(
    params: Record<string, string>,
    reference: string,
  ): Promise<PaymentResponse | Declined> {
    const redirectResult = params.redirectResult;
    if (!redirectResult) {
      return {
        status: "declined",
        errorType: "card.failed-three-d-s",
        message: "The cardholder did not complete 3-D Secure at Adyen.",
      };
    }
    const details = await send<PaymentResponse>(
      "/payments/details",
      { details: { redirectResult } },
      reference,
    );
    return "error" in details ? refused(details) : details.ok;
  }

  async function authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
    if (request.threeDS.answer?.kind === "provider-redirect") {
      const completed = await completeAuthentication(request.threeDS.answer.params, request.reference);
      if ("errorType" in completed) return { ...completed, checks: NO_CHECKS, threeDS: "failed" };
      const expected = request.threeDS.providerState?.psp_reference;
      if (expected && completed.pspReference && completed.pspReference !== expected) {
        // The redirect result came back through the cardholder's browser: it must be this payment's.
        return {
          status: "declined",
          errorType: "card.failed-three-d-s",
          message: "The authentication result Adyen returned is not this payment's.",
          checks: NO_CHECKS,
          threeDS: "failed",
        };
      }
      return paymentOutcome(completed, request.threeDS, true);
    }
    const amount = adyenAmount(request.amount, request.currency);
    if (!amount)
      return { ...unpayable(request.amount, request.currency), checks: NO_CHECKS, threeDS: "not-applicable" };
    const merchant = request.initiator === "merchant";
    const made = await send<PaymentResponse>(
      "/payments",
      {
        amount,
        reference: request.reference,
        merchantAccount: settings.merchantAccount,
        paymentMethod: cardOf(request.card, request.scheme),
        returnUrl: request.threeDS.returnUrl,
        channel: "Web",
        shopperInteraction: merchant ? "ContAuth" : "Ecommerce",
        ...(merchant ? { recurringProcessingModel: "UnscheduledCardOnFile" } : {}),
        authenticationData: {
          threeDSRequestData: { nativeThreeDS: "disabled" },
          ...(request.threeDS.demand === "required" && !merchant ? { attemptAuthentication: "always" } : {}),
          ...(request.threeDS.demand === "dropped" ? { attemptAuthentication: "never" } : {}),
        },
        additionalData: {
          manualCapture: "true",
          ...(request.incremental ? { authorisationType: "PreAuth" } : {}),
          ...(merchant && request.networkTransactionId
            ? { networkTxReference: request.networkTransactionId }
            : {}),
        },
        metadata: { scope: request.scope, transaction_id: request.threeDS.serverTransactionId },
      },
      request.reference,
    );
    if ("error" in made) return { ...refused(made), checks: NO_CHECKS, threeDS: "not-applicable" };
    const outcome = paymentOutcome(made.ok, merchant ? undefined : request.threeDS, false);
    // The next attempt completes this payment: Adyen knows it by this attempt's reference.
    if (outcome.status === "customer-action") {
      return { ...outcome, providerState: { ...outcome.providerState, reference: request.reference } };
    }
    return outcome;
  }

  async function verifyCard(request: VerifyRequest): Promise<VerifyOutcome> {
    if (request.threeDS?.answer?.kind === "provider-redirect") {
      const completed = await completeAuthentication(request.threeDS.answer.params, request.reference);
      if ("errorType" in completed) return { ...completed, checks: NO_CHECKS };
      return verificationOutcome(paymentOutcome(completed, request.threeDS, true));
    }
    // A zero-value authorization: Adyen's card verification.
    const made = await send<PaymentResponse>(
      "/payments",
      {
        amount: { value: 0, currency: "EUR" },
        reference: request.reference,
        merchantAccount: settings.merchantAccount,
        paymentMethod: cardOf(request.card, request.scheme ?? null),
        returnUrl: request.threeDS?.returnUrl ?? "https://example.invalid/no-return",
        channel: "Web",
        shopperInteraction: "Ecommerce",
        recurringProcessingModel: "CardOnFile",
        storePaymentMethod: false,
        authenticationData: { threeDSRequestData: { nativeThreeDS: "disabled" } },
        metadata: { scope: request.scope },
      },
      request.reference,
    );
    if ("error" in made) return { ...refused(made), checks: NO_CHECKS };
    return verificationOutcome(paymentOutcome(made.ok, request.threeDS, false));
  }

  /** A modification: Adyen only says it received it; its webhook says how it ended. */
  async function modify(
    path: string,
    request: { gatewayReference: string; reference: string },
    amount?: { amount: string; currency: string },
  ): Promise<CaptureOutcome> {
    const value = amount ? adyenAmount(amount.amount, amount.currency) : undefined;
    if (amount && !value) return unpayable(amount.amount, amount.currency);
    const sent = await send<ModificationResponse>(
      `/payments/${encodeURIComponent(request.gatewayReference)}/${path}`,
      {
        merchantAccount: settings.merchantAccount,
        reference: request.reference,
        ...(value ? { amount: value } : {}),
      },
      request.reference,
    );
    if ("error" in sent) {
      if (sent.error?.errorCode === "167" || sent.error?.errorCode === "905_3") {
        // Adyen: the original payment does not allow this modification.
        return {
          status: "declined",
          errorType: "gateway.declined",
          message: `Adyen refused the ${path}: ${sent.error.message ?? ""}`,
        };
      }
      return refused(sent);
    }
    return { status: "received" };
  }

  async function incrementAuthorization(request: FollowUpRequest): Promise<OperationOutcome> {
    // Adyen's amount update names the new total: the authorization as it stands plus the increment.
    const total = addAmounts(request.authorizedAmount, request.amount);
    const outcome = await modify("amountUpdates", request, { amount: total, currency: request.currency });
    if (outcome.status === "declined" && outcome.errorType === "gateway.declined") {
      return {
        status: "declined",
        errorType: "payment.increment-not-supported",
        message:
          "Adyen cannot update this authorization's amount: it was not made as a pre-authorisation, or the card does not support it.",
      };
    }
    return outcome.status === "approved" ? { status: "approved" } : outcome;
  }

  async function lookup(request: LookupRequest): Promise<LookupOutcome> {
    // An attempt after a 3DS round: Adyen's payment was made under the first attempt's reference.
    const reference =
      (request.kind === "authorization" && request.providerState?.reference) || request.reference;
    const notification = await findNotification(
      request.scope,
      settings.configurationId,
      reference,
      eventCodesOf(request.kind),
    );
    if (!notification) {
      throw new Error(`Adyen has not told about ${request.reference} yet: its webhook settles it`);
    }
    const success = notification.success === "true";
    if (request.kind === "authorization" || request.kind === "verification") {
      return {
        status: "found",
        outcome: success
          ? {
              status: "approved",
              gatewayReference: notification.pspReference,
              checks: NO_CHECKS,
              threeDS: "not-applicable",
            }
          : {
              ...adyenDecline({ refusalReasonCode: "2", additionalData: notification.additionalData ?? {} }),
              checks: NO_CHECKS,
              threeDS: "not-applicable",
            },
      };
    }
    // CAPTURE_FAILED and REFUND_FAILED say the operation failed, whatever their `success`.
    if (success && !notification.eventCode.endsWith("_FAILED")) {
      return {
        status: "found",
        outcome:
          request.kind === "capture" ? { status: "approved", chargedBack: false } : { status: "approved" },
      };
    }
    return {
      status: "found",
      outcome: {
        status: "declined",
        errorType: request.kind === "refund" ? "refund.declined" : "gateway.declined",
        message: `Adyen did not carry out the ${request.kind}: ${notification.reason ?? "no reason given"}.`,
      },
    };
  }

  return {
    card: { authorize, incrementAuthorization, verifyCard },
    capture: (request) => modify("captures", request, request),
    void: (request: VoidRequest) => modify("cancels", request) as Promise<OperationOutcome>,
    refund: (request) => modify("refunds", request, request) as Promise<OperationOutcome>,
    lookup,
  };
}

/** The webhook events that settle each kind of operation. */
function eventCodesOf(kind: LookupRequest["kind"]): string[] {
  switch (kind) {
    case "capture":
      return ["CAPTURE", "CAPTURE_FAILED"];
    case "void":
      return ["CANCELLATION"];
    case "refund":
      return ["REFUND", "REFUND_FAILED"];
    case "increment":
      return ["AUTHORISATION_ADJUSTMENT"];
    default:
      return ["AUTHORISATION"];
  }
}

function cardOf(card: AuthorizeRequest["card"], scheme: string | null) {
  return {
    type: "scheme",
    number: card.number,
    expiryMonth: String(card.expMonth).padStart(2, "0"),
    expiryYear: String(card.expYear),
    ...(card.cvc ? { cvc: card.cvc } : {}),
    ...(card.name ? { holderName: card.name } : {}),
    ...(scheme ? { brand: scheme === "mastercard" ? "mc" : scheme } : {}),
  };
}

function paymentOutcome(
  response: PaymentResponse,
  threeDS: ThreeDSContext | undefined,
  afterAuthentication: boolean,
): AuthorizeOutcome {
  const checks = checksOf(response.additionalData);
  const authenticated: ThreeDSStatus = afterAuthentication
    ? "challenge-passed"
    : threeDSOf(response.additionalData);
  switch (response.resultCode) {
    case "Authorised":
      return {
        status: "approved",
        gatewayReference: response.pspReference ?? "",
        checks,
        threeDS: authenticated,
        networkTransactionId: response.additionalData?.networkTxReference ?? null,
      };
    case "RedirectShopper":
    case "ChallengeShopper":
    case "IdentifyShopper": {
      const url = response.action?.url;
      if (threeDS && url && (response.action?.method ?? "GET").toUpperCase() === "GET") {
        return {
          status: "customer-action",
          // The issuer's pages may refuse to be framed: the whole page goes there, and comes back.
          customerAction: { type: "url", value: url, metadata: { no_iframe: "true" } },
          round: "provider-redirect",
          threeDS: "challenge-required",
          ...(response.pspReference ? { providerState: { psp_reference: response.pspReference } } : {}),
        };
      }
      return {
        status: "declined",
        errorType: "card.needs-authentication",
        message:
          "The issuer requires the cardholder to authenticate (3-D Secure), which a merchant-initiated payment cannot do.",
        checks,
        threeDS: "failed",
      };
    }
    case "Refused":
    case "Cancelled":
      return { ...adyenDecline(response), checks, threeDS: afterAuthentication ? "failed" : authenticated };
    case "Error":
      return {
        status: "declined",
        errorType: "gateway.error",
        message: `Adyen could not process the payment: ${response.refusalReason ?? "an error"}.`,
        checks,
        threeDS: "not-applicable",
      };
    default:
      // Pending or Received: Adyen decides later, and says so in its webhook.
      throw new OutcomeUnknown(
        `Adyen answered ${response.resultCode} for ${response.merchantReference ?? "a payment"}`,
      );
  }
}

function verificationOutcome(outcome: AuthorizeOutcome): VerifyOutcome {
  if (outcome.status === "approved")
    return { status: "approved", gatewayReference: outcome.gatewayReference, checks: outcome.checks };
  if (outcome.status === "customer-action") return outcome;
  const { threeDS: _threeDS, ...declined } = outcome;
  return declined;
}

/** Adyen's `cvcResult` ("1 Matches", "2 Does not match") and `avsResult` (codes, "4 AVS not supported"). */
function checksOf(additional: Record<string, string> | undefined): CheckResults {
  if (!additional) return NO_CHECKS;
  const cvcCode = additional.cvcResult?.split(" ")[0];
  const cvc: CheckResult = cvcCode === "1" ? "passed" : cvcCode === "2" ? "failed" : "unavailable";
  const avsCode = additional.avsResult?.split(" ")[0];
  const avs: CheckResult =
    avsCode === "7" || avsCode === "4" || avsCode === "5" || avsCode === undefined
      ? "unavailable"
      : ["2", "6", "11", "20", "21"].includes(avsCode)
        ? "failed"
        : "passed";
  return { cvc, avs };
}

function threeDSOf(additional: Record<string, string> | undefined): ThreeDSStatus {
  if (additional?.threeDAuthenticated !== "true") return "not-applicable";
  return additional.threeDSAuthenticationFlow === "challenge" ? "challenge-passed" : "frictionless";
}
