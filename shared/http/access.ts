import { authenticationFailed, validationFailed } from "./errors.ts";
import type { Input } from "./input.ts";

/**
 * What the public key may do: the project id alone, as browser and mobile libraries send it from
 * the shopper's device, where anyone can read it. It may only do the client-side operations of the
 * spec: tokenize a card, pay an invoice with a source it holds, attach a source to a customer token,
 * increment an authorization where the invoice allows it, and read what paying needs (the enabled
 * gateway configurations, the native APM step). It can never read, list, refund, void or change
 * anything else: every other route refuses it (401), and on these routes it is held to the fields
 * below and shown only the part of the answer a browser needs.
 *
 * A route accepts the public key by naming one of these in its handler
 * (`api(handle, { publicKey: PUBLIC_KEY_ACCESS.payment })`); the HTTP core applies it
 * (`shared/http/api.ts`). The rule is written down for merchants in the README.
 */
export interface PublicKeyAccess {
  /**
   * What a public-key request may send: the fields it names are kept, every other one is dropped
   * before the handler (or the `Idempotency-Key` fingerprint) sees the request. It throws when what
   * is asked is not the public key's to ask.
   */
  request(input: { query: Input; body: Input }): { query: Input; body: Input };
  /** What a public-key caller is answered, from the route's whole answer (beside `success: true`). */
  answer(body: Record<string, unknown>): Record<string, unknown>;
}

function only<T extends Record<string, unknown>>(value: T, names: readonly string[]): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([name]) => names.includes(name))) as Partial<T>;
}

/** The device data the libraries send for 3DS2 (`device`); mobile libraries name their 3DS SDK. */
const DEVICE_FIELDS = ["device", "enable_three_d_s_2", "third_party_sdk_version"] as const;

/**
 * `customer_action` when there is one to perform, else nothing: the web library performs any
 * `customer_action` present and not null, and fails on an empty `{}` (which server libraries need).
 */
function actionToPerform(body: Record<string, unknown>): Record<string, unknown> {
  const action = body.customer_action;
  const toPerform = typeof action === "object" && action !== null && "type" in action;
  return toPerform ? { customer_action: action } : {};
}

const requireSource = (body: Input, what: string) => {
  if (body.source === undefined || body.source === null || body.source === "") {
    throw authenticationFailed(`With the project id alone (the public key), ${what} needs a source.`);
  }
};

export const PUBLIC_KEY_ACCESS = {
  /** `POST /cards`: tokenizing a card is what the public key is for; the card is the caller's own input. */
  cards: {
    request: (input) => input,
    answer: (body) => body,
  },
  /**
   * `PUT /cards/{id}`: a card's new CVC or preferred scheme, as the mobile libraries send it before a
   * payment (a saved card's CVC asked again); nothing else of the card. A change is required: the
   * route is no way to read a card (`GET /cards/{id}` refuses the public key). The answer is what the
   * mobile libraries decode (`POCard`), without what the merchant keeps on the card: its holder's
   * name, its fingerprint and its metadata (shown empty, which the iOS library requires present).
   */
  cardRefresh: {
    request: ({ query, body }) => {
      const change = only(body, ["cvc", "preferred_scheme"]);
      if (!Object.values(change).some((value) => value !== undefined && value !== null && value !== "")) {
        throw validationFailed("missing-cvc", [
          { name: "cvc", message: "is required with the public key, unless preferred_scheme is sent" },
        ]);
      }
      return { query, body: change };
    },
    answer: (body) => {
      const { name: _name, fingerprint: _fingerprint, ...card } = body.card as Record<string, unknown>;
      return { card: { ...card, metadata: {} } };
    },
  },
  /** `GET /iins/{iin}`: what the first digits of a card number say (scheme, type, bank): public data. */
  iins: {
    request: ({ query }) => ({ query, body: {} }),
    answer: (body) => body,
  },
  /**
   * `POST /invoices/{id}/authorize` and `/capture`: paying the invoice with a source (a card, a
   * customer token, the `gway_req_…` answer to a customer action, or a native APM configuration),
   * with the options the libraries offer. Capturing an authorization already made (no source), a
   * partial capture (`amount`) and the transaction's `metadata` stay the merchant's server's. The
   * answer tells only what the customer must do next (`customer_action`, absent when nothing),
   * never the transaction.
   */
  payment: {
    request: ({ query, body }) => {
      requireSource(body, "a payment");
      return {
        query,
        body: only(body, [
          "source",
          "authorize_only",
          "auto_capture_at",
          "capture_amount",
          "preferred_scheme",
          "incremental",
          "save_source",
          "allow_fallback_to_sale",
          ...DEVICE_FIELDS,
        ]),
      };
    },
    answer: actionToPerform,
  },
  /** `POST /invoices/{id}/increment_authorization`: the amount; the answer is the outcome alone. */
  increment: {
    request: ({ query, body }) => ({ query, body: only(body, ["amount"]) }),
    answer: () => ({}),
  },
  /**
   * `PUT /customers/{c}/tokens/{t}`: attaching a source to the token and verifying it, nothing
   * else of the token (its metadata, description, URLs stay the merchant's).
   */
  tokenSource: {
    request: ({ query, body }) => {
      requireSource(body, "a customer token change");
      return { query, body: only(body, ["source", "verify", "preferred_scheme", ...DEVICE_FIELDS]) };
    },
    answer: (body) => ({ ...only(body, ["token"]), ...actionToPerform(body) }),
  },
  /**
   * `GET /gateway-configurations`: the enabled configurations a payment page may offer
   * (`with_disabled` is the merchant's), without their settings.
   */
  gatewayConfigurations: {
    request: ({ query }) => ({
      query: only(query, [
        "filter",
        "expand_merchant_accounts",
        "limit",
        "order",
        "start_after",
        "end_before",
      ]),
      body: {},
    }),
    answer: (body) => ({
      ...body,
      gateway_configurations: (body.gateway_configurations as Record<string, unknown>[]).map(
        ({ settings: _settings, ...shown }) => shown,
      ),
    }),
  },
  /**
   * `POST /invoices/{id}/native-payment` and `GET …/native-payment/{configuration}`: the step of the
   * native APM payment and the values the customer gives; the answer is the step (`native_apm`).
   */
  nativePayment: {
    request: ({ query, body }) => ({ query, body: only(body, ["gateway_configuration_id", "native_apm"]) }),
    answer: (body) => only(body, ["native_apm"]),
  },
} as const satisfies Record<string, PublicKeyAccess>;
