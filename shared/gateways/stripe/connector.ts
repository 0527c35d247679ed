import { decodeTime } from "ulid";
import { clock } from "../../clock.ts";
import { addAmounts } from "../../money.ts";
import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CaptureOutcome,
  CardConnector,
  CardCredentials,
  CheckResult,
  CheckResults,
  CustomerActionOutcome,
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
import { stripeDecline, stripeRefusal } from "./declines.ts";
import {
  type Charge,
  chargeOf,
  type FormValue,
  formEncode,
  type PaymentIntent,
  type Refund,
  type SetupIntent,
  STRIPE_VERSION,
  type StripeError,
  type StripeList,
  stripeAmount,
  stripeApiUrl,
} from "./wire.ts";

/**
 * The `stripe` connector: card payments through Stripe's PaymentIntents API (version
 * `STRIPE_VERSION`), with the secret key of the merchant's account.
 *
 * - authorize: the card (opened from our vault for this call) becomes a PaymentMethod, then a
 *   PaymentIntent confirmed at once with `capture_method=manual`. A customer-initiated payment may
 *   need 3-D Secure: Stripe's `redirect_to_url` becomes our `customer_action` (`url`), Stripe sends
 *   the cardholder back to our return address, and the next attempt reads the PaymentIntent.
 *   A merchant-initiated one is sent `off_session` with the card's network transaction id.
 * - capture, void (cancel), refund, increment: on the PaymentIntent; verify: a SetupIntent.
 * - Every write carries `Idempotency-Key`: our operation's reference (its PaymentMethod the
 *   reference with `-pm`), so a repeated call is answered its first result and moves nothing twice.
 * - lookup: an authorization or verification is searched by its reference in `metadata` (Stripe's
 *   search can lag up to a minute: "not found" is only believed once the reference is older than
 *   `SEARCH_LAG_MS`); a follow-up is read off its PaymentIntent or its refunds.
 */
const SEARCH_LAG_MS = 5 * 60_000;

interface StripeSettings {
  secretKey: string;
}

/** What a call answered: the object, or Stripe's error with its HTTP status. */
type StripeResult<T> = { ok: T } | { error: StripeError | undefined; status: number };

export function stripeConnector(settings: StripeSettings): CardConnector {
  const send = async <T>(
    method: "GET" | "POST",
    path: string,
    options: { form?: Record<string, FormValue>; idempotencyKey?: string } = {},
  ): Promise<StripeResult<T>> => {
    const body = options.form ? formEncode(options.form) : undefined;
    const answer = await callProvider({
      url: `${stripeApiUrl()}${path}`,
      method,
      headers: {
        authorization: `Bearer ${settings.secretKey}`,
        "stripe-version": STRIPE_VERSION,
        ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        ...(options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {}),
      },
      ...(body !== undefined ? { body } : {}),
      timeoutMs: providerTimeoutMs(),
    });
    if (answer.status >= 200 && answer.status < 300) return { ok: answer.body as T };
    // Stripe cannot tell whether it processed the request (its documented meaning of a 5xx): the
    // operation stays reserved until its records can (lookup, after the lease).
    if (answer.status >= 500)
      throw new OutcomeUnknown(`Stripe answered ${answer.status} to ${method} ${path.split("?")[0]}`);
    // Refused for the load before anything was done: try again shortly.
    if (answer.status === 429)
      throw new ProviderUnreachable(
        `Stripe rate-limited ${method} ${path.split("?")[0]}`,
        "gateway.rate-limited",
      );
    // A concurrent request with the same idempotency key is still being processed.
    if (answer.status === 409) throw new OutcomeUnknown(`Stripe is still processing ${method} ${path}`);
    return { error: (answer.body as { error?: StripeError } | null)?.error, status: answer.status };
  };

  /** A refusal of the request itself: Stripe's error mapped, with the intent it carries if any. */
  const refused = (result: { error: StripeError | undefined; status: number }): Declined =>
    result.status === 402 ? stripeDecline(result.error) : stripeRefusal(result.error, result.status);

  async function paymentMethod(
    reference: string,
    card: CardCredentials,
  ): Promise<StripeResult<{ id: string }>> {
    return send<{ id: string }>("POST", "/v1/payment_methods", {
      idempotencyKey: `${reference}-pm`,
      form: {
        type: "card",
        card: {
          number: card.number,
          exp_month: card.expMonth,
          exp_year: card.expYear,
          ...(card.cvc ? { cvc: card.cvc } : {}),
        },
        ...(card.name ? { billing_details: { name: card.name } } : {}),
      },
    });
  }

  async function authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
    const continued = request.threeDS.providerState?.payment_intent;
    if (continued && request.threeDS.answer?.kind === "provider-redirect") {
      // The cardholder is back from Stripe's authentication page: where does the intent stand?
      const read = await send<PaymentIntent>(
        "GET",
        `/v1/payment_intents/${encodeURIComponent(continued)}?expand[]=latest_charge`,
      );
      if ("error" in read) return { ...refused(read), checks: NO_CHECKS, threeDS: "failed" };
      return intentOutcome(read.ok, request.threeDS);
    }
    const amount = stripeAmount(request.amount, request.currency);
    if (amount === undefined) {
      return {
        ...unpayableAmount(request.amount, request.currency),
        checks: NO_CHECKS,
        threeDS: "not-applicable",
      };
    }
    const method = await paymentMethod(request.reference, request.card);
    if ("error" in method) return { ...refused(method), checks: NO_CHECKS, threeDS: "not-applicable" };
    const merchant = request.initiator === "merchant";
    const created = await send<PaymentIntent>("POST", "/v1/payment_intents", {
      idempotencyKey: request.reference,
      form: {
        amount,
        currency: request.currency.toLowerCase(),
        payment_method: method.ok.id,
        payment_method_types: ["card"],
        capture_method: "manual",
        confirm: true,
        metadata: {
          reference: request.reference,
          scope: request.scope,
          transaction_id: request.threeDS.serverTransactionId,
        },
        expand: ["latest_charge"],
        ...(merchant ? { off_session: true } : { return_url: request.threeDS.returnUrl }),
        payment_method_options: {
          card: {
            ...(request.scheme ? { network: request.scheme } : {}),
            ...(request.threeDS.demand === "required" && !merchant ? { request_three_d_secure: "any" } : {}),
            ...(request.incremental ? { request_incremental_authorization: "if_available" } : {}),
            ...(merchant && request.networkTransactionId
              ? { mit_exemption: { network_transaction_id: request.networkTransactionId } }
              : {}),
          },
        },
      },
    });
    if ("error" in created) {
      const intent = created.error?.payment_intent;
      // A confirmation refused by the issuer still made the intent: its charge tells the checks.
      const checks = intent ? checksOf(chargeOf(intent)) : NO_CHECKS;
      return { ...refused(created), checks, threeDS: "not-applicable" };
    }
    return intentOutcome(created.ok, request.threeDS);
  }

  async function capture(request: FollowUpRequest): Promise<CaptureOutcome> {
    const amount = stripeAmount(request.amount, request.currency);
    if (amount === undefined) return unpayableAmount(request.amount, request.currency);
    const captured = await send<PaymentIntent>(
      "POST",
      `/v1/payment_intents/${encodeURIComponent(request.gatewayReference)}/capture`,
      {
        idempotencyKey: request.reference,
        form: { amount_to_capture: amount, metadata: { capture_reference: request.reference } },
      },
    );
    if ("error" in captured) return refused(captured);
    if (captured.ok.status !== "succeeded") {
      return {
        status: "declined",
        errorType: "gateway.declined",
        message: `Stripe did not capture the payment (its PaymentIntent is ${captured.ok.status}).`,
      };
    }
    return { status: "approved", chargedBack: false };
  }

  async function cancel(request: VoidRequest): Promise<OperationOutcome> {
    const canceled = await send<PaymentIntent>(
      "POST",
      `/v1/payment_intents/${encodeURIComponent(request.gatewayReference)}/cancel`,
      { idempotencyKey: request.reference, form: {} },
    );
    if ("error" in canceled) return refused(canceled);
    return canceled.ok.status === "canceled"
      ? { status: "approved" }
      : {
          status: "declined",
          errorType: "gateway.declined",
          message: `Stripe did not cancel the payment (${canceled.ok.status}).`,
        };
  }

  async function refund(request: FollowUpRequest): Promise<OperationOutcome> {
    const amount = stripeAmount(request.amount, request.currency);
    if (amount === undefined) return unpayableAmount(request.amount, request.currency);
    const made = await send<Refund>("POST", "/v1/refunds", {
      idempotencyKey: request.reference,
      form: {
        payment_intent: request.gatewayReference,
        amount,
        metadata: {
          reference: request.reference,
          ...(request.refundId ? { refund_id: request.refundId } : {}),
        },
      },
    });
    if ("error" in made) return refused(made);
    return refundOutcome(made.ok);
  }

  async function incrementAuthorization(request: FollowUpRequest): Promise<OperationOutcome> {
    // Stripe's increment names the new total: the authorization as it stands plus the increment.
    const total = stripeAmount(addAmounts(request.authorizedAmount, request.amount), request.currency);
    if (total === undefined) return unpayableAmount(request.amount, request.currency);
    const incremented = await send<PaymentIntent>(
      "POST",
      `/v1/payment_intents/${encodeURIComponent(request.gatewayReference)}/increment_authorization`,
      {
        idempotencyKey: request.reference,
        form: { amount: total, metadata: { increment_reference: request.reference } },
      },
    );
    if ("error" in incremented) {
      if (incremented.error?.code === "payment_intent_unexpected_state") {
        return {
          status: "declined",
          errorType: "payment.increment-not-supported",
          message:
            "Stripe cannot increment this authorization: the card or its network does not support incremental authorizations.",
        };
      }
      return refused(incremented);
    }
    return { status: "approved" };
  }

  async function verifyCard(request: VerifyRequest): Promise<VerifyOutcome> {
    const continued = request.threeDS?.providerState?.setup_intent;
    if (continued && request.threeDS?.answer?.kind === "provider-redirect") {
      const read = await send<SetupIntent>(
        "GET",
        `/v1/setup_intents/${encodeURIComponent(continued)}?expand[]=latest_attempt`,
      );
      if ("error" in read) return { ...refused(read), checks: NO_CHECKS };
      return setupOutcome(read.ok, request.threeDS);
    }
    const method = await paymentMethod(request.reference, request.card);
    if ("error" in method) return { ...refused(method), checks: NO_CHECKS };
    const created = await send<SetupIntent>("POST", "/v1/setup_intents", {
      idempotencyKey: request.reference,
      form: {
        payment_method: method.ok.id,
        payment_method_types: ["card"],
        confirm: true,
        usage: "off_session",
        metadata: { reference: request.reference, scope: request.scope },
        expand: ["latest_attempt"],
        ...(request.threeDS ? { return_url: request.threeDS.returnUrl } : {}),
        ...(request.scheme ? { payment_method_options: { card: { network: request.scheme } } } : {}),
      },
    });
    if ("error" in created) return { ...refused(created), checks: NO_CHECKS };
    return setupOutcome(created.ok, request.threeDS);
  }

  async function lookup(request: LookupRequest): Promise<LookupOutcome> {
    switch (request.kind) {
      case "authorization":
      case "verification":
        return lookupIntent(request);
      case "capture":
      case "void":
      case "increment":
        return lookupOnIntent(request);
      case "refund":
        return lookupRefund(request);
      default:
        return { status: "not-found" };
    }
  }

  async function lookupIntent(request: LookupRequest): Promise<LookupOutcome> {
    const earlier = request.providerState?.payment_intent;
    if (request.kind === "authorization" && earlier) {
      // An attempt after a 3DS round reads the PaymentIntent an earlier attempt made: that is its record.
      const read = await send<PaymentIntent>(
        "GET",
        `/v1/payment_intents/${encodeURIComponent(earlier)}?expand[]=latest_charge`,
      );
      if ("error" in read) throw new Error(`Stripe could not read ${earlier} (${read.status})`);
      if (read.ok.status === "requires_action") return { status: "not-found" };
      return { status: "found", outcome: intentOutcome(read.ok, undefined) };
    }
    const intent =
      request.kind === "verification"
        ? await findSetupIntent(request.reference)
        : await findPaymentIntent(request.reference);
    if (intent === undefined) return { status: "not-found" };
    return {
      status: "found",
      outcome:
        intent.object === "setup_intent" ? setupOutcome(intent, undefined) : intentOutcome(intent, undefined),
    };
  }

  /**
   * The PaymentIntent made under `reference`, found by Stripe's search on its metadata. The search
   * can lag up to a minute behind: "not there" is believed only of a reference older than
   * `SEARCH_LAG_MS`; a younger one cannot be told yet (the operation stays reserved).
   */
  async function findPaymentIntent(reference: string): Promise<PaymentIntent | undefined> {
    const query = encodeURIComponent(`metadata['reference']:'${reference}'`);
    const found = await send<StripeList<PaymentIntent>>(
      "GET",
      `/v1/payment_intents/search?query=${query}&expand[]=data.latest_charge`,
    );
    if ("error" in found)
      throw new Error(`Stripe's search failed (${found.status}): ${found.error?.message ?? ""}`);
    const intent = found.ok.data.find((item) => item.metadata?.reference === reference);
    if (!intent && clock.now().getTime() - referenceTime(reference) < SEARCH_LAG_MS) {
      throw new Error(`Stripe's search may not list ${reference} yet: ask again later`);
    }
    return intent;
  }

  /**
   * The SetupIntent made under `reference`: Stripe offers no search of SetupIntents, so its list
   * (always current) is read from the reference's time on, newest first, a page of 100 at a time.
   */
  async function findSetupIntent(reference: string): Promise<SetupIntent | undefined> {
    const since = Math.floor(referenceTime(reference) / 1000) - 60;
    let after: string | undefined;
    for (;;) {
      const page = await send<StripeList<SetupIntent>>(
        "GET",
        `/v1/setup_intents?created[gte]=${since}&limit=100&expand[]=data.latest_attempt${after ? `&starting_after=${encodeURIComponent(after)}` : ""}`,
      );
      if ("error" in page) throw new Error(`Stripe could not list SetupIntents (${page.status})`);
      const intent = page.ok.data.find((item) => item.metadata?.reference === reference);
      if (intent || !page.ok.has_more || page.ok.data.length === 0) return intent;
      after = page.ok.data.at(-1)?.id;
    }
  }

  /** A capture, void or increment is what the PaymentIntent shows now. */
  async function lookupOnIntent(request: LookupRequest): Promise<LookupOutcome> {
    if (!request.gatewayReference) return { status: "not-found" };
    const read = await send<PaymentIntent>(
      "GET",
      `/v1/payment_intents/${encodeURIComponent(request.gatewayReference)}`,
    );
    if ("error" in read)
      throw new Error(`Stripe could not read ${request.gatewayReference} (${read.status})`);
    const intent = read.ok;
    if (request.kind === "capture" && intent.status === "succeeded") {
      return { status: "found", outcome: { status: "approved", chargedBack: false } };
    }
    if (request.kind === "void" && intent.status === "canceled")
      return { status: "found", outcome: { status: "approved" } };
    if (request.kind === "increment" && intent.metadata?.increment_reference === request.reference) {
      return { status: "found", outcome: { status: "approved" } };
    }
    return { status: "not-found" };
  }

  async function lookupRefund(request: LookupRequest): Promise<LookupOutcome> {
    if (!request.gatewayReference) return { status: "not-found" };
    let after: string | undefined;
    for (;;) {
      const listed = await send<StripeList<Refund>>(
        "GET",
        `/v1/refunds?payment_intent=${encodeURIComponent(request.gatewayReference)}&limit=100${after ? `&starting_after=${encodeURIComponent(after)}` : ""}`,
      );
      if ("error" in listed)
        throw new Error(`Stripe could not list the refunds of ${request.gatewayReference}`);
      const made = listed.ok.data.find((item) => item.metadata?.reference === request.reference);
      if (made) return { status: "found", outcome: refundOutcome(made) };
      if (!listed.ok.has_more || listed.ok.data.length === 0) return { status: "not-found" };
      after = listed.ok.data.at(-1)?.id;
    }
  }

  return {
    card: { authorize, incrementAuthorization, verifyCard },
    capture,
    void: cancel,
    refund,
    lookup,
  };
}

// ─── Reading Stripe's answers ─────────────────────────────────────────────────────────────────────

function intentOutcome(intent: PaymentIntent, threeDS: ThreeDSContext | undefined): AuthorizeOutcome {
  const charge = chargeOf(intent);
  const checks = checksOf(charge);
  switch (intent.status) {
    case "requires_capture":
    case "succeeded":
      return {
        status: "approved",
        gatewayReference: intent.id,
        checks,
        threeDS: threeDSStatusOf(charge),
        networkTransactionId: charge?.payment_method_details?.card?.network_transaction_id ?? null,
      };
    case "requires_action": {
      const action = redirectAction(intent.next_action, threeDS, { payment_intent: intent.id });
      if (action) return action;
      // A merchant-initiated payment cannot ask the cardholder: the issuer wants them present.
      return {
        ...stripeDecline({ type: "card_error", code: "authentication_required" }),
        checks,
        threeDS: "failed",
      };
    }
    case "requires_payment_method":
    case "canceled": {
      const authenticationFailed =
        intent.last_payment_error?.code === "payment_intent_authentication_failure";
      return {
        ...stripeDecline(intent.last_payment_error),
        checks,
        threeDS: authenticationFailed ? "failed" : threeDSStatusOf(charge),
      };
    }
    default:
      // `processing`: Stripe has not decided; it will. The operation stays reserved until it tells.
      throw new OutcomeUnknown(`Stripe's PaymentIntent ${intent.id} is ${intent.status}`);
  }
}

function setupOutcome(intent: SetupIntent, threeDS: ThreeDSContext | undefined): VerifyOutcome {
  const attempt =
    typeof intent.latest_attempt === "object" && intent.latest_attempt !== null
      ? intent.latest_attempt
      : undefined;
  const checks = checksOf({ payment_method_details: attempt?.payment_method_details ?? null });
  switch (intent.status) {
    case "succeeded":
      return { status: "approved", gatewayReference: intent.id, checks };
    case "requires_action": {
      const action = redirectAction(intent.next_action, threeDS, { setup_intent: intent.id });
      if (action) return action;
      return { ...stripeDecline({ type: "card_error", code: "authentication_required" }), checks };
    }
    case "requires_payment_method":
    case "canceled":
      return { ...stripeDecline(intent.last_setup_error), checks };
    default:
      throw new OutcomeUnknown(`Stripe's SetupIntent ${intent.id} is ${intent.status}`);
  }
}

/**
 * Stripe's page for the cardholder (`redirect_to_url`) as our `customer_action`, when the payment
 * has a cardholder to send there (a 3DS context); `state` names the intent the next attempt reads.
 */
function redirectAction(
  next: PaymentIntent["next_action"],
  threeDS: ThreeDSContext | undefined,
  state: Record<string, string>,
): CustomerActionOutcome | undefined {
  const url = next?.redirect_to_url?.url;
  if (!url || !threeDS) return undefined;
  return {
    status: "customer-action",
    customerAction: { type: "url", value: url, metadata: {} },
    round: "provider-redirect",
    threeDS: "challenge-required",
    providerState: state,
  };
}

function refundOutcome(refund: Refund): OperationOutcome {
  // A pending refund is accepted: its rare later failure arrives as Stripe's `charge.refund.updated`.
  if (refund.status === "succeeded" || refund.status === "pending") return { status: "approved" };
  return {
    status: "declined",
    errorType: "refund.declined",
    message: `Stripe did not refund the payment (${refund.failure_reason ?? refund.status}).`,
  };
}

const CHECK: Readonly<Record<string, CheckResult>> = { pass: "passed", fail: "failed" };

function checksOf(charge: Pick<Charge, "payment_method_details"> | undefined): CheckResults {
  const checks = charge?.payment_method_details?.card?.checks;
  if (!checks) return NO_CHECKS;
  const avs = [checks.address_line1_check, checks.address_postal_code_check];
  return {
    cvc: CHECK[checks.cvc_check ?? ""] ?? "unavailable",
    avs: avs.includes("fail") ? "failed" : avs.includes("pass") ? "passed" : "unavailable",
  };
}

function threeDSStatusOf(charge: Charge | undefined): ThreeDSStatus {
  const secure = charge?.payment_method_details?.card?.three_d_secure;
  if (!secure) return "not-applicable";
  if (secure.result !== "authenticated" && secure.result !== "attempt_acknowledged") return "failed";
  return secure.authentication_flow === "challenge" ? "challenge-passed" : "frictionless";
}

function unpayableAmount(amount: string, currency: string): Declined {
  return {
    status: "declined",
    errorType: "gateway.validation-error",
    message: `Stripe cannot take ${amount} ${currency.toUpperCase()}: it charges this currency in other units (see Stripe's currency rules).`,
  };
}

/** When an operation was reserved: our references are ULIDs (`op_…`). */
function referenceTime(reference: string): number {
  try {
    return decodeTime(reference.replace(/^[a-z]+_/, ""));
  } catch {
    return 0;
  }
}
