import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse } from "qs";

/**
 * A stateful double of Stripe's API, for the `stripe` connector's tests and for `npm start` without
 * a Stripe account (`npx tsx test/doubles/serve.ts`). It follows Stripe's documented behaviour for
 * what the connector uses: PaymentMethods, PaymentIntents with manual capture (create and confirm,
 * retrieve, capture, cancel, increment, search by metadata), refunds, SetupIntents, `Idempotency-Key`
 * (the first answer replayed for the same parameters, 400 `idempotency_error` for others), Stripe's
 * test cards (`TEST_CARDS`), 3-D Secure by redirect (its page at `/double/3ds/{intent}`), and signed
 * webhooks (`Stripe-Signature`) to the endpoints registered with `addWebhookEndpoint`.
 *
 * Not Stripe: it proves the connector's logic against Stripe's documented semantics; the contract
 * tests prove its requests against Stripe's own mock (`../shared/tools/stripe-mock`).
 */

type Behaviour =
  | "success"
  | "three-d-s"
  | "three-d-s-on-session"
  | "disputed"
  | "refund-fails"
  | "no-increment"
  | { decline: string; code?: string; advice?: string };

/** Stripe's test card numbers, as its documentation lists them. */
export const TEST_CARDS: Readonly<Record<string, Behaviour>> = {
  "4242424242424242": "success",
  "5555555555554444": "success",
  "4000000000000002": { decline: "generic_decline" },
  "4000000000009995": { decline: "insufficient_funds" },
  "4000000000009987": { decline: "lost_card" },
  "4000000000009979": { decline: "stolen_card" },
  "4000000000000069": { decline: "expired_card", code: "expired_card" },
  "4000000000000127": { decline: "incorrect_cvc", code: "incorrect_cvc" },
  "4100000000000019": { decline: "fraudulent" },
  "4000000000000119": { decline: "processing_error", code: "processing_error" },
  "4000000000006975": { decline: "card_velocity_exceeded" },
  "4000000000000259": "disputed",
  "4000000000005126": "refund-fails",
  "4000000000003220": "three-d-s",
  "4000000000003063": "three-d-s",
  "4000002500003155": "three-d-s-on-session",
  "4000000000000010": "no-increment",
};

interface PaymentMethod {
  id: string;
  number: string;
  cvc: string | null;
  exp_month: number;
  exp_year: number;
}

interface Intent {
  id: string;
  object: "payment_intent";
  status: string;
  amount: number;
  amount_capturable: number;
  amount_received: number;
  amount_refunded: number;
  currency: string;
  metadata: Record<string, string>;
  payment_method: string;
  off_session: boolean;
  return_url: string | null;
  incremental: boolean;
  mit_network_transaction_id: string | null;
  three_d_s: "none" | "pending" | "passed" | "failed";
  last_payment_error: Record<string, unknown> | null;
  charge_id: string;
  network_transaction_id: string;
  created: number;
}

interface SetupIntent {
  id: string;
  object: "setup_intent";
  status: string;
  payment_method: string;
  metadata: Record<string, string>;
  return_url: string | null;
  last_setup_error: Record<string, unknown> | null;
  created: number;
}

/** A payout and the balance transactions it settled (Stripe's objects, `source` kept expanded). */
interface Payout {
  id: string;
  object: "payout";
  amount: number;
  currency: string;
  status: "paid";
  arrival_date: number;
  created: number;
  statement_descriptor: string | null;
  transactions: Array<{
    id: string;
    object: "balance_transaction";
    type: string;
    amount: number;
    fee: number;
    net: number;
    currency: string;
    created: number;
    fee_details: Array<{ amount: number; currency: string; type: string; description: string }>;
    source: { id: string; object: string; payment_intent?: string | null };
  }>;
}

interface Refund {
  id: string;
  object: "refund";
  amount: number;
  status: string;
  failure_reason: string | null;
  metadata: Record<string, string>;
  payment_intent: string;
  currency: string;
}

/** A fault the next matching request meets (see `injectFault`). */
export type StripeFault =
  /** The answer never comes: the connection stays open until the client gives up. */
  | "hang-after-processing"
  /** The request is processed, then the connection is cut before the answer. */
  | "cut-after-processing"
  /** Stripe answers 500 without processing anything. */
  | "error-500"
  /** Stripe answers 429 (too many requests) without processing anything. */
  | "rate-limited";

export interface StripeDouble {
  url: string;
  /** Every request received, in order (method, path without query, parsed form body). */
  requests: Array<{ method: string; path: string; form: Record<string, unknown>; idempotencyKey?: string }>;
  intent(id: string): Intent | undefined;
  intents(): Intent[];
  refunds(): Refund[];
  /** Every webhook sent: the event type, the endpoint, and the status it answered (0: no answer). */
  deliveries: Array<{ type: string; url: string; status: number }>;
  /** Signed webhooks go to `url`, signed with `secret` (the endpoint's signing secret). */
  addWebhookEndpoint(url: string, secret: string): void;
  /** The next request whose path contains `pathPart` meets `fault`. */
  injectFault(pathPart: string, fault: StripeFault): void;
  /**
   * Pays out, in `currency`, every captured charge and succeeded refund not paid out yet, as Stripe's
   * automatic payout does: its balance transactions carry Stripe's fee (1.5 % + 25 minor units per
   * charge, in `fee_details`), and the payout is their net sum. Answers the payout's id.
   */
  payOut(currency: string): string;
  /** Sends an event about `object` to the webhook endpoints now (as Stripe would), signed at `signedAt` (unix s). */
  emit(type: string, object: unknown, signedAt?: number): Promise<void>;
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);
const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("base64url")}`;

/** `latencyMs`: every API answer waits this long first, as a provider's network and processing would. */
export async function startStripeDouble(
  options: { port?: number; latencyMs?: number } = {},
): Promise<StripeDouble> {
  const methods = new Map<string, PaymentMethod>();
  const intents = new Map<string, Intent>();
  const setups = new Map<string, SetupIntent>();
  const refunds = new Map<string, Refund>();
  const payouts: Payout[] = [];
  /** The charges and refunds a payout already paid out (by id): each is paid out once. */
  const paidOut = new Set<string>();
  const idempotent = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  const endpoints: Array<{ url: string; secret: string }> = [];
  const faults: Array<{ pathPart: string; fault: StripeFault }> = [];
  const requests: StripeDouble["requests"] = [];
  const deliveries: StripeDouble["deliveries"] = [];
  let base = "";

  const behaviourOf = (methodId: string): Behaviour =>
    TEST_CARDS[methods.get(methodId)?.number ?? ""] ?? "success";

  const error = (status: number, body: Record<string, unknown>) => ({ status, body: { error: body } });

  function charge(intent: Intent) {
    const method = methods.get(intent.payment_method);
    const behaviour = behaviourOf(intent.payment_method);
    return {
      id: intent.charge_id,
      object: "charge",
      amount: intent.amount,
      amount_refunded: intent.amount_refunded,
      disputed: behaviour === "disputed" && intent.amount_received > 0,
      payment_method_details: {
        type: "card",
        card: {
          brand: method?.number.startsWith("5") ? "mastercard" : "visa",
          last4: method?.number.slice(-4),
          checks: {
            cvc_check: method?.cvc
              ? typeof behaviour === "object" && behaviour.code === "incorrect_cvc"
                ? "fail"
                : "pass"
              : null,
            address_line1_check: null,
            address_postal_code_check: null,
          },
          network_transaction_id: intent.network_transaction_id,
          three_d_secure:
            intent.three_d_s === "none"
              ? null
              : {
                  result: intent.three_d_s === "passed" ? "authenticated" : "failed",
                  authentication_flow: "challenge",
                },
          incremental_authorization: { status: behaviour === "no-increment" ? "unavailable" : "available" },
        },
      },
    };
  }

  function present(intent: Intent, expand: string[]) {
    return {
      id: intent.id,
      object: "payment_intent",
      amount: intent.amount,
      amount_capturable: intent.amount_capturable,
      amount_received: intent.amount_received,
      capture_method: "manual",
      currency: intent.currency,
      created: intent.created,
      livemode: false,
      metadata: intent.metadata,
      payment_method: intent.payment_method,
      status: intent.status,
      last_payment_error: intent.last_payment_error,
      next_action:
        intent.status === "requires_action"
          ? {
              type: "redirect_to_url",
              redirect_to_url: { url: `${base}/double/3ds/${intent.id}`, return_url: intent.return_url },
            }
          : null,
      latest_charge: expand.some((path) => path.endsWith("latest_charge"))
        ? charge(intent)
        : intent.charge_id,
    };
  }

  function presentSetup(setup: SetupIntent) {
    return {
      id: setup.id,
      object: "setup_intent",
      status: setup.status,
      metadata: setup.metadata,
      payment_method: setup.payment_method,
      last_setup_error: setup.last_setup_error,
      usage: "off_session",
      next_action:
        setup.status === "requires_action"
          ? {
              type: "redirect_to_url",
              redirect_to_url: { url: `${base}/double/3ds/${setup.id}`, return_url: setup.return_url },
            }
          : null,
      latest_attempt: null,
    };
  }

  function declineOf(behaviour: Behaviour): Record<string, unknown> | undefined {
    if (typeof behaviour !== "object") return undefined;
    return {
      type: "card_error",
      code: behaviour.code ?? "card_declined",
      decline_code: behaviour.decline,
      message: `Your card was declined (${behaviour.decline}).`,
      ...(behaviour.advice ? { advice_code: behaviour.advice } : {}),
    };
  }

  function confirm(intent: Intent): { status: number; body: unknown } {
    const behaviour = behaviourOf(intent.payment_method);
    const decline = declineOf(behaviour);
    if (decline) {
      intent.status = "requires_payment_method";
      intent.last_payment_error = decline;
      return error(402, { ...decline, payment_intent: present(intent, ["latest_charge"]) });
    }
    const wantsAuthentication =
      behaviour === "three-d-s" ||
      (behaviour === "three-d-s-on-session" && !intent.mit_network_transaction_id);
    if (wantsAuthentication) {
      if (intent.off_session) {
        const needed = {
          type: "card_error",
          code: "authentication_required",
          decline_code: "authentication_required",
          message: "This payment requires authentication.",
        };
        intent.status = "requires_payment_method";
        intent.last_payment_error = needed;
        return error(402, { ...needed, payment_intent: present(intent, []) });
      }
      intent.status = "requires_action";
      intent.three_d_s = "pending";
      return { status: 200, body: undefined };
    }
    authorizeIntent(intent);
    return { status: 200, body: undefined };
  }

  function authorizeIntent(intent: Intent) {
    intent.status = "requires_capture";
    intent.amount_capturable = intent.amount;
    intent.last_payment_error = null;
  }

  type Answer = { status: number; body: unknown };

  async function route(
    method: string,
    path: string,
    query: Record<string, unknown>,
    form: Record<string, unknown>,
  ): Promise<Answer> {
    const expand = [...toList(query.expand), ...toList(form.expand)].map(String);
    const search = path === "/v1/payment_intents/search";
    const onIntent = path.match(/^\/v1\/payment_intents\/([^/]+)(?:\/([a-z_]+))?$/);
    const setupRead = path.match(/^\/v1\/setup_intents\/([^/]+)$/);

    if (method === "POST" && path === "/v1/payment_methods") {
      const card = (form.card ?? {}) as Record<string, string>;
      const number = String(card.number ?? "");
      if (!/^\d{12,19}$/.test(number) || !luhn(number)) {
        return error(402, {
          type: "card_error",
          code: "incorrect_number",
          message: "Your card number is incorrect.",
        });
      }
      const created: PaymentMethod = {
        id: newId("pm"),
        number,
        cvc: card.cvc ? String(card.cvc) : null,
        exp_month: Number(card.exp_month),
        exp_year: Number(card.exp_year),
      };
      methods.set(created.id, created);
      return {
        status: 200,
        body: { id: created.id, object: "payment_method", type: "card", card: { last4: number.slice(-4) } },
      };
    }

    if (method === "POST" && path === "/v1/payment_intents") {
      const amount = Number(form.amount);
      if (!Number.isInteger(amount) || amount < 1)
        return error(400, {
          type: "invalid_request_error",
          code: "amount_too_small",
          param: "amount",
          message: "Invalid amount.",
        });
      if (!methods.has(String(form.payment_method)))
        return error(400, {
          type: "invalid_request_error",
          code: "resource_missing",
          param: "payment_method",
          message: "No such PaymentMethod.",
        });
      const options = ((form.payment_method_options as Record<string, unknown> | undefined)?.card ??
        {}) as Record<string, unknown>;
      const intent: Intent = {
        id: newId("pi"),
        object: "payment_intent",
        status: "requires_confirmation",
        amount,
        amount_capturable: 0,
        amount_received: 0,
        amount_refunded: 0,
        currency: String(form.currency),
        metadata: (form.metadata ?? {}) as Record<string, string>,
        payment_method: String(form.payment_method),
        off_session: form.off_session === "true",
        return_url: form.return_url ? String(form.return_url) : null,
        incremental:
          options.request_incremental_authorization === "if_available" ||
          options.request_incremental_authorization === "always",
        mit_network_transaction_id:
          (options.mit_exemption as Record<string, string> | undefined)?.network_transaction_id ?? null,
        three_d_s: "none",
        last_payment_error: null,
        charge_id: newId("ch"),
        network_transaction_id: String(100000000000000 + Math.floor(Math.random() * 899999999999999)),
        created: now(),
      };
      intents.set(intent.id, intent);
      if (form.confirm === "true") {
        const confirmed = confirm(intent);
        if (confirmed.status !== 200) return confirmed;
      }
      if (intent.status === "requires_capture")
        await emit("payment_intent.amount_capturable_updated", present(intent, []));
      return { status: 200, body: present(intent, expand) };
    }

    if (method === "GET" && search) {
      // Stripe's search on metadata: `metadata['reference']:'op_…'` is all the connector asks.
      const wanted = /metadata\['reference'\]:'([^']*)'/.exec(String(query.query ?? ""))?.[1];
      const inner = expand.map((path) => path.replace(/^data\./, ""));
      const data = [...intents.values()]
        .filter((intent) => intent.metadata.reference === wanted)
        .map((intent) => present(intent, inner));
      return { status: 200, body: { object: "search_result", data, has_more: false } };
    }

    if (onIntent && !search) {
      const intent = intents.get(decodeURIComponent(onIntent[1] ?? ""));
      if (!intent)
        return error(404, {
          type: "invalid_request_error",
          code: "resource_missing",
          message: "No such payment_intent.",
        });
      const action = onIntent[2];
      if (method === "GET" && !action) return { status: 200, body: present(intent, expand) };
      if (method === "POST" && action === "capture") {
        if (intent.status !== "requires_capture") return unexpectedState(intent, "capture");
        const amount =
          form.amount_to_capture === undefined ? intent.amount_capturable : Number(form.amount_to_capture);
        if (amount > intent.amount_capturable)
          return error(400, {
            type: "invalid_request_error",
            code: "amount_too_large",
            param: "amount_to_capture",
            message: "The amount to capture is larger than what is capturable.",
          });
        intent.amount_received = amount;
        intent.amount_capturable = 0;
        intent.status = "succeeded";
        intent.metadata = { ...intent.metadata, ...((form.metadata ?? {}) as Record<string, string>) };
        await emit("payment_intent.succeeded", present(intent, []));
        if (behaviourOf(intent.payment_method) === "disputed") {
          await emit("charge.dispute.created", {
            id: newId("dp"),
            object: "dispute",
            charge: intent.charge_id,
            payment_intent: intent.id,
            amount,
            status: "needs_response",
          });
        }
        return { status: 200, body: present(intent, expand) };
      }
      if (method === "POST" && action === "cancel") {
        if (
          ![
            "requires_capture",
            "requires_action",
            "requires_payment_method",
            "requires_confirmation",
          ].includes(intent.status)
        )
          return unexpectedState(intent, "cancel");
        intent.status = "canceled";
        intent.amount_capturable = 0;
        await emit("payment_intent.canceled", present(intent, []));
        return { status: 200, body: present(intent, expand) };
      }
      if (method === "POST" && action === "increment_authorization") {
        if (
          intent.status !== "requires_capture" ||
          !intent.incremental ||
          behaviourOf(intent.payment_method) === "no-increment"
        )
          return unexpectedState(intent, "increment_authorization");
        const amount = Number(form.amount);
        if (amount <= intent.amount)
          return error(400, {
            type: "invalid_request_error",
            code: "parameter_invalid_integer",
            param: "amount",
            message: "The amount must be larger than the current amount.",
          });
        intent.amount = amount;
        intent.amount_capturable = amount;
        intent.metadata = { ...intent.metadata, ...((form.metadata ?? {}) as Record<string, string>) };
        return { status: 200, body: present(intent, expand) };
      }
    }

    if (method === "POST" && path === "/v1/refunds") {
      const intent = intents.get(String(form.payment_intent));
      if (!intent)
        return error(400, {
          type: "invalid_request_error",
          code: "resource_missing",
          param: "payment_intent",
          message: "No such payment_intent.",
        });
      if (intent.status !== "succeeded")
        return error(400, {
          type: "invalid_request_error",
          code: "charge_not_refundable",
          message: "The payment is not captured.",
        });
      const amount =
        form.amount === undefined ? intent.amount_received - intent.amount_refunded : Number(form.amount);
      if (amount > intent.amount_received - intent.amount_refunded)
        return error(400, {
          type: "invalid_request_error",
          code: "charge_exceeds_refundable_amount",
          message: "The refund exceeds the refundable amount.",
        });
      const failsLater = behaviourOf(intent.payment_method) === "refund-fails";
      const refund: Refund = {
        id: newId("re"),
        object: "refund",
        amount,
        status: failsLater ? "pending" : "succeeded",
        failure_reason: null,
        metadata: (form.metadata ?? {}) as Record<string, string>,
        payment_intent: intent.id,
        currency: intent.currency,
      };
      refunds.set(refund.id, refund);
      intent.amount_refunded += amount;
      if (failsLater) {
        // As Stripe's test card: the refund is accepted, then fails, which a webhook says.
        setTimeout(() => {
          refund.status = "failed";
          refund.failure_reason = "expired_or_canceled_card";
          intent.amount_refunded -= amount;
          void emit("charge.refund.updated", refund);
        }, 50);
      }
      return { status: 200, body: refund };
    }

    if (method === "GET" && path === "/v1/payouts") {
      const created = (query.created ?? {}) as Record<string, string>;
      const after = query.starting_after ? String(query.starting_after) : undefined;
      const limit = Number(query.limit ?? 10);
      const matching = [...payouts]
        .reverse()
        .filter((payout) => created.gt === undefined || payout.created > Number(created.gt))
        .filter((payout) => created.lte === undefined || payout.created <= Number(created.lte));
      const start = after ? matching.findIndex((payout) => payout.id === after) + 1 : 0;
      const data = matching.slice(start, start + limit).map(({ transactions, ...payout }) => payout);
      return { status: 200, body: { object: "list", data, has_more: start + limit < matching.length } };
    }

    if (method === "GET" && path === "/v1/balance_transactions") {
      const payout = payouts.find((found) => found.id === query.payout);
      if (!payout) return { status: 200, body: { object: "list", data: [], has_more: false } };
      const expanded = expand.includes("data.source");
      const after = query.starting_after ? String(query.starting_after) : undefined;
      const limit = Number(query.limit ?? 10);
      const start = after ? payout.transactions.findIndex((found) => found.id === after) + 1 : 0;
      const data = payout.transactions.slice(start, start + limit).map((transaction) => ({
        ...transaction,
        source: expanded ? transaction.source : transaction.source.id,
      }));
      return {
        status: 200,
        body: { object: "list", data, has_more: start + limit < payout.transactions.length },
      };
    }

    if (method === "GET" && path === "/v1/refunds") {
      const data = [...refunds.values()].filter((refund) => refund.payment_intent === query.payment_intent);
      return { status: 200, body: { object: "list", data, has_more: false } };
    }

    if (method === "POST" && path === "/v1/setup_intents") {
      if (!methods.has(String(form.payment_method)))
        return error(400, {
          type: "invalid_request_error",
          code: "resource_missing",
          param: "payment_method",
          message: "No such PaymentMethod.",
        });
      const setup: SetupIntent = {
        id: newId("seti"),
        object: "setup_intent",
        status: "requires_confirmation",
        payment_method: String(form.payment_method),
        metadata: (form.metadata ?? {}) as Record<string, string>,
        return_url: form.return_url ? String(form.return_url) : null,
        last_setup_error: null,
        created: now(),
      };
      setups.set(setup.id, setup);
      if (form.confirm === "true") {
        const behaviour = behaviourOf(setup.payment_method);
        const decline = declineOf(behaviour);
        if (decline) {
          setup.status = "requires_payment_method";
          setup.last_setup_error = decline;
          return error(402, { ...decline, setup_intent: presentSetup(setup) });
        }
        setup.status =
          behaviour === "three-d-s" || behaviour === "three-d-s-on-session" ? "requires_action" : "succeeded";
      }
      return { status: 200, body: presentSetup(setup) };
    }

    if (method === "GET" && path === "/v1/setup_intents") {
      const since = Number((query.created as Record<string, string> | undefined)?.gte ?? 0);
      const data = [...setups.values()]
        .filter((setup) => setup.created >= since)
        .reverse()
        .map(presentSetup);
      return { status: 200, body: { object: "list", data, has_more: false } };
    }

    if (method === "GET" && setupRead && !search) {
      const setup = setups.get(decodeURIComponent(setupRead[1] ?? ""));
      if (!setup)
        return error(404, {
          type: "invalid_request_error",
          code: "resource_missing",
          message: "No such setup_intent.",
        });
      return { status: 200, body: presentSetup(setup) };
    }

    return error(404, {
      type: "invalid_request_error",
      message: `Unrecognized request URL (${method}: ${path}).`,
    });
  }

  function unexpectedState(intent: Intent, action: string): Answer {
    return error(400, {
      type: "invalid_request_error",
      code: "payment_intent_unexpected_state",
      message: `This PaymentIntent's ${action} could not be performed because it has a status of ${intent.status}.`,
    });
  }

  /** The cardholder's authentication page: `?answer=approve|fail` decides, then back to `return_url`. */
  function authenticationPage(id: string, answer: string | undefined, response: ServerResponse) {
    const intent = intents.get(id);
    const setup = setups.get(id);
    const returnUrl = intent?.return_url ?? setup?.return_url;
    if ((!intent && !setup) || !returnUrl) {
      response.writeHead(404).end("No such authentication");
      return;
    }
    if (answer !== "approve" && answer !== "fail") {
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<!doctype html><title>Stripe test authentication</title><h1>3D Secure test page</h1><a id="approve" href="?answer=approve">Complete authentication</a> <a id="fail" href="?answer=fail">Fail authentication</a>`,
        );
      return;
    }
    if (intent) {
      intent.three_d_s = answer === "approve" ? "passed" : "failed";
      if (answer === "approve") authorizeIntent(intent);
      else {
        intent.status = "requires_payment_method";
        intent.last_payment_error = {
          type: "invalid_request_error",
          code: "payment_intent_authentication_failure",
          message: "We are unable to authenticate your payment method.",
        };
      }
    }
    if (setup) {
      setup.status = answer === "approve" ? "succeeded" : "requires_payment_method";
      if (answer !== "approve")
        setup.last_setup_error = {
          type: "invalid_request_error",
          code: "setup_intent_authentication_failure",
        };
    }
    const target = new URL(returnUrl);
    target.searchParams.set(intent ? "payment_intent" : "setup_intent", id);
    response.writeHead(302, { location: target.toString() }).end();
  }

  async function emit(type: string, object: unknown, signedAt?: number): Promise<void> {
    const payload = JSON.stringify({
      id: newId("evt"),
      object: "event",
      api_version: "2024-04-10",
      created: now(),
      type,
      livemode: false,
      data: { object },
    });
    await Promise.all(
      endpoints.map(async (endpoint) => {
        const t = signedAt ?? now();
        const signature = createHmac("sha256", endpoint.secret).update(`${t}.${payload}`).digest("hex");
        try {
          const answer = await fetch(endpoint.url, {
            method: "POST",
            headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${signature}` },
            body: payload,
          });
          deliveries.push({ type, url: endpoint.url, status: answer.status });
        } catch {
          // Stripe retries for days; the double sends once (the test sends again where it must).
          deliveries.push({ type, url: endpoint.url, status: 0 });
        }
      }),
    );
  }

  const server: Server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://double");
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");

    if (request.method === "POST" && url.pathname === "/double/webhook-endpoints") {
      // For a developer's stack (`serve.ts`): where to send events, with which signing secret.
      const { url: target, secret } = JSON.parse(raw || "{}") as { url?: string; secret?: string };
      if (!target || !secret)
        return send(response, 400, { error: { message: "url and secret are required" } });
      endpoints.push({ url: target, secret });
      return send(response, 200, { url: target });
    }
    const page = url.pathname.match(/^\/double\/3ds\/([^/]+)$/);
    if (page) {
      authenticationPage(
        decodeURIComponent(page[1] ?? ""),
        url.searchParams.get("answer") ?? undefined,
        response,
      );
      return;
    }
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    const key = /^Bearer (sk|rk)_(test|live)_\w+$/.test(request.headers.authorization ?? "");
    if (!key) {
      send(response, 401, { error: { type: "invalid_request_error", message: "Invalid API Key provided." } });
      return;
    }
    const form = parse(raw, { depth: 10, arrayLimit: 100 }) as Record<string, unknown>;
    const query = parse(url.search.slice(1), { depth: 10 }) as Record<string, unknown>;
    const idempotencyKey = request.headers["idempotency-key"] as string | undefined;
    requests.push({
      method: request.method ?? "GET",
      path: url.pathname,
      form,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });

    const faultIndex = faults.findIndex((fault) => url.pathname.includes(fault.pathPart));
    const fault = faultIndex >= 0 ? faults.splice(faultIndex, 1)[0]?.fault : undefined;
    if (fault === "error-500") {
      send(response, 500, { error: { type: "api_error", message: "An unknown error occurred." } });
      return;
    }
    if (fault === "rate-limited") {
      send(response, 429, {
        error: { type: "invalid_request_error", code: "rate_limit", message: "Too many requests." },
      });
      return;
    }

    let answer: Answer;
    const scope = `${request.headers.authorization} ${idempotencyKey}`;
    const fingerprint = `${request.method} ${url.pathname} ${raw}`;
    const earlier = idempotencyKey && request.method === "POST" ? idempotent.get(scope) : undefined;
    if (earlier && earlier.fingerprint !== fingerprint) {
      answer = error(400, {
        type: "idempotency_error",
        message:
          "Keys for idempotent requests can only be used with the same parameters they were first used with.",
      });
    } else if (earlier) {
      answer = { status: earlier.status, body: earlier.body };
    } else {
      answer = await route(request.method ?? "GET", url.pathname, query, form);
      if (idempotencyKey && request.method === "POST" && answer.status < 500)
        idempotent.set(scope, { fingerprint, ...answer });
    }
    if (fault === "cut-after-processing") {
      request.socket.destroy();
      return;
    }
    if (fault === "hang-after-processing") return; // the client's timeout ends it
    send(response, answer.status, answer.body);
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    deliveries,
    intent: (id) => intents.get(id),
    intents: () => [...intents.values()],
    refunds: () => [...refunds.values()],
    payOut: (currency) => {
      const created = now();
      const transactions: Payout["transactions"] = [];
      const fee = (amount: number) => Math.round(amount * 0.015) + 25;
      for (const intent of intents.values()) {
        if (intent.currency !== currency || intent.amount_received === 0 || paidOut.has(intent.charge_id))
          continue;
        paidOut.add(intent.charge_id);
        const charged = fee(intent.amount_received);
        transactions.push({
          id: newId("txn"),
          object: "balance_transaction",
          type: "charge",
          amount: intent.amount_received,
          fee: charged,
          net: intent.amount_received - charged,
          currency,
          created,
          fee_details: [
            { amount: charged, currency, type: "stripe_fee", description: "Stripe processing fees" },
          ],
          source: { id: intent.charge_id, object: "charge", payment_intent: intent.id },
        });
      }
      for (const refund of refunds.values()) {
        if (refund.currency !== currency || refund.status !== "succeeded" || paidOut.has(refund.id)) continue;
        paidOut.add(refund.id);
        transactions.push({
          id: newId("txn"),
          object: "balance_transaction",
          type: "refund",
          amount: -refund.amount,
          fee: 0,
          net: -refund.amount,
          currency,
          created,
          fee_details: [],
          source: { id: refund.id, object: "refund", payment_intent: refund.payment_intent },
        });
      }
      const net = transactions.reduce((sum, transaction) => sum + transaction.net, 0);
      const id = newId("po");
      transactions.push({
        id: newId("txn"),
        object: "balance_transaction",
        type: "payout",
        amount: -net,
        fee: 0,
        net: -net,
        currency,
        created,
        fee_details: [],
        source: { id, object: "payout" },
      });
      payouts.push({
        id,
        object: "payout",
        amount: net,
        currency,
        status: "paid",
        arrival_date: created + 2 * 86_400,
        created,
        statement_descriptor: "STRIPE PAYOUT",
        transactions,
      });
      return id;
    },
    addWebhookEndpoint: (url, secret) => {
      endpoints.push({ url, secret });
    },
    injectFault: (pathPart, fault) => {
      faults.push({ pathPart, fault });
    },
    emit,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(response: ServerResponse, status: number, body: unknown) {
  response
    .writeHead(status, { "content-type": "application/json", "request-id": newId("req") })
    .end(JSON.stringify(body));
}

function toList(value: unknown): unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === "object" && value !== null) return Object.values(value);
  return [value];
}

function luhn(number: string): boolean {
  let sum = 0;
  for (let index = 0; index < number.length; index++) {
    let digit = Number(number[number.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
