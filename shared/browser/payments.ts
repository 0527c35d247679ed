/**
 * The client-side operations of the spec for the browser, as a small ES module of our own: served at
 * `/assets/payments.js` by the API (built by `lib/browser-assets.ts`), used by the hosted checkout
 * page and by merchants' own pages:
 *
 *   import { Payments } from "https://<api>/assets/payments.js";
 *   const payments = new Payments("test-proj_…");
 *   const card = await payments.tokenizeCard({ number, exp_month, exp_year, cvc, name });
 *   await payments.makeCardPayment(invoiceId, card.id);
 *
 * It authenticates with the public key (the project id alone), and handles the customer actions a
 * payment answers (`url` and `redirect` in a modal frame, `fingerprint` in a hidden one) by the
 * pages' `postMessage` protocol `{"namespace": "processout.checkout", "action": …}`, then sends the
 * request again as the web client library does.
 */

/** A card as the shopper typed it. `exp_year` may have two digits (20xx). */
export interface CardInput {
  number: string;
  exp_month: string;
  exp_year: string;
  cvc: string;
  name?: string;
}

/** The tokenized card (`card_…`), as `POST /cards` answers it. */
export interface Card {
  id: string;
  scheme: string | null;
  last_4_digits: string;
  exp_month: number;
  exp_year: number;
  [field: string]: unknown;
}

/** The options of `makeCardPayment` (the spec's), and an `Idempotency-Key` prefix. */
export interface PaymentOptions {
  /** Authorize only: the merchant's server captures later. */
  authorize_only?: boolean;
  /** ISO 8601 time of an automatic capture. */
  auto_capture_at?: string;
  /** What that automatic capture captures (only with `auto_capture_at`). */
  capture_amount?: string;
  /** The card scheme or co-scheme given priority. */
  preferred_scheme?: string;
  /** Each request of the payment is sent with `<key>-<n>`, so that a retried request is recognised. */
  idempotency_key?: string;
}

export interface PaymentsOptions {
  /** Where the API is. Default: the address this module was loaded from. */
  apiUrl?: string;
  /** Where a challenge's modal frame goes. Default: the document's body. */
  container?: HTMLElement;
}

/** A refusal: the API's `error_type` (`card.declined`, …) or the customer's (`customer.canceled`). */
export class PaymentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "PaymentError";
  }
}

interface CustomerAction {
  type: string;
  value: string;
  metadata?: Record<string, unknown> | null;
}

interface Answer {
  success?: boolean;
  error_type?: string;
  message?: string;
  customer_action?: CustomerAction | Record<string, never> | null;
  [field: string]: unknown;
}

/** The API version the web client library speaks. */
const API_VERSION = "1.3.0.0";
/** A fingerprint page that has not answered by then is given up, as the web library does. */
const FINGERPRINT_TIMEOUT_MS = 10_000;
const CHECKOUT_NAMESPACE = "processout.checkout";

export class Payments {
  private readonly apiUrl: string;
  private readonly authorization: string;
  private readonly container: HTMLElement | undefined;

  constructor(
    private readonly projectId: string,
    options: PaymentsOptions = {},
  ) {
    if (!projectId) throw new PaymentError("payments.missing-project-id", "A project id is needed.");
    this.apiUrl = (options.apiUrl ?? new URL(import.meta.url).origin).replace(/\/$/, "");
    this.authorization = `Basic ${btoa(`${projectId}:`)}`;
    this.container = options.container;
  }

  /** Whether the project id is a sandbox environment's (payments there are never real). */
  get sandbox(): boolean {
    return this.projectId.startsWith("test-");
  }

  /** Tokenizes a card (`POST /cards`). */
  async tokenizeCard(card: CardInput): Promise<Card> {
    const answer = await this.request("POST", "/cards", {
      number: card.number.replace(/[\s-]/g, ""),
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      cvc2: card.cvc,
      ...(card.name ? { name: card.name } : {}),
      device: deviceData(),
    });
    return answer.card as Card;
  }

  /**
   * Pays an invoice (`POST /invoices/{id}/capture`, or authorizes only with `authorize_only`) with a
   * card or customer token id, performing each customer action it is asked for (3-D Secure).
   * Resolves once the payment is done; rejects with a `PaymentError`.
   */
  async makeCardPayment(invoiceId: string, source: string, options: PaymentOptions = {}): Promise<void> {
    const { idempotency_key: idempotencyKey, ...chosen } = options;
    await this.untilNoAction(
      `/invoices/${encodeURIComponent(invoiceId)}/capture`,
      "POST",
      source,
      chosen,
      idempotencyKey,
    );
  }

  /**
   * Attaches a card to a customer token made to wait for one (`verify=true`) and verifies it
   * (`PUT /customers/{c}/tokens/{t}`), performing the customer actions it is asked for.
   */
  async makeCardToken(cardId: string, customerId: string, tokenId: string): Promise<void> {
    await this.untilNoAction(
      `/customers/${encodeURIComponent(customerId)}/tokens/${encodeURIComponent(tokenId)}`,
      "PUT",
      cardId,
      { verify: true },
    );
  }

  /** Increments the authorization of an invoice that allows it (`POST /invoices/{id}/increment_authorization`). */
  async incrementAuthorizationAmount(invoiceId: string, amount: number | string): Promise<void> {
    await this.request("POST", `/invoices/${encodeURIComponent(invoiceId)}/increment_authorization`, {
      amount: String(amount),
    });
  }

  /**
   * Sends the request, performs the customer action it answers, and sends it again (with the card,
   * or with the `gway_req_…` source the action gave) until no action is asked for.
   */
  private async untilNoAction(
    path: string,
    method: "POST" | "PUT",
    cardSource: string,
    options: Record<string, unknown>,
    idempotencyKey?: string,
  ): Promise<void> {
    let source = cardSource;
    for (let round = 1; ; round++) {
      const answer = await this.request(
        method,
        path,
        { ...options, source, enable_three_d_s_2: true, device: deviceData() },
        idempotencyKey ? `${idempotencyKey}-${round}` : undefined,
      );
      const action = actionOf(answer);
      if (!action) return;
      source = (await this.perform(action)) ?? cardSource;
    }
  }

  /** Performs a customer action; the new source it yields, if any. */
  private async perform(action: CustomerAction): Promise<string | undefined> {
    switch (action.type) {
      case "url":
      case "redirect":
        if (action.metadata?.no_iframe === "true") {
          // The page cannot be framed: the whole page goes there, and comes back to `return_url`.
          window.location.assign(action.value);
          return new Promise<never>(() => {});
        }
        return sourceFrom(await this.inFrame(action.value, "challenge"));
      case "fingerprint":
        try {
          return sourceFrom(await this.inFrame(action.value, "fingerprint"));
        } catch (error) {
          if (!(error instanceof FingerprintTimeout)) throw error;
          return fingerprintTimeoutSource(action.value);
        }
      default:
        throw new PaymentError(
          "payments.wrong-type-for-action",
          `The customer action type ${action.type} is not supported.`,
        );
    }
  }

  /**
   * Opens `url` in a frame (a modal dialog for a challenge, hidden for a fingerprint) and waits for
   * its page to say it is done; resolves with the message's `data`.
   */
  private inFrame(url: string, kind: "challenge" | "fingerprint"): Promise<unknown> {
    const frame = document.createElement("iframe");
    frame.src = url;
    frame.title = kind === "challenge" ? "Verify your payment with your bank" : "Device check";
    let dialog: HTMLDialogElement | undefined;
    if (kind === "challenge") {
      dialog = challengeDialog(frame);
      (this.container ?? document.body).append(dialog);
      dialog.showModal();
    } else {
      frame.hidden = true;
      (this.container ?? document.body).append(frame);
    }
    const origin = new URL(url, window.location.href).origin;

    return new Promise<unknown>((resolve, reject) => {
      const close = () => {
        window.removeEventListener("message", onMessage);
        clearTimeout(timer);
        dialog?.close();
        dialog?.remove();
        frame.remove();
      };
      const onMessage = (event: MessageEvent) => {
        if (event.source !== frame.contentWindow || event.origin !== origin) return;
        const message = parseMessage(event.data);
        if (message?.namespace !== CHECKOUT_NAMESPACE) return;
        close();
        if (message.action === "success") resolve(message.data);
        else if (message.action === "canceled")
          reject(new PaymentError("customer.canceled", "The verification was canceled."));
        else
          reject(
            new PaymentError(
              stringOr(message.errorCode, "three-d-s.failed"),
              stringOr(message.errorMessage, "The verification failed."),
            ),
          );
      };
      window.addEventListener("message", onMessage);
      dialog?.addEventListener("cancel", () => {
        close();
        reject(new PaymentError("customer.canceled", "The verification was canceled."));
      });
      const timer =
        kind === "fingerprint"
          ? setTimeout(() => {
              close();
              reject(new FingerprintTimeout());
            }, FINGERPRINT_TIMEOUT_MS)
          : undefined;
    });
  }

  private async request(
    method: string,
    path: string,
    body: Record<string, unknown>,
    idempotencyKey?: string,
  ): Promise<Answer> {
    let response: Response;
    try {
      response = await fetch(`${this.apiUrl}${path}`, {
        method,
        headers: {
          authorization: this.authorization,
          "content-type": "application/json",
          accept: "application/json",
          "api-version": API_VERSION,
          ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
        body: JSON.stringify(body),
      });
    } catch {
      throw new PaymentError("payments.network-issue", "The payment service could not be reached.");
    }
    let answer: Answer;
    try {
      answer = (await response.json()) as Answer;
    } catch {
      throw new PaymentError("payments.invalid-response", `The payment service answered ${response.status}.`);
    }
    if (!response.ok || answer.success !== true) {
      throw new PaymentError(
        stringOr(answer.error_type, "payments.error"),
        stringOr(answer.message, "The payment service refused the request."),
      );
    }
    return answer;
  }
}

class FingerprintTimeout extends Error {}

/** The action asked for, if any: absent, `null` and `{}` all mean none. */
function actionOf(answer: Answer): CustomerAction | undefined {
  const action = answer.customer_action;
  if (!action || !("type" in action) || typeof action.type !== "string") return undefined;
  return action as CustomerAction;
}

/** A page's message: the web library's protocol sends it as a JSON string. */
function parseMessage(data: unknown): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = typeof data === "string" ? JSON.parse(data) : data;
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A `gway_req_…` source an action's page gave, else none (the payment goes on with the card). */
function sourceFrom(data: unknown): string | undefined {
  return typeof data === "string" && data.startsWith("gway_req_") ? data : undefined;
}

/** What the web library sends when a fingerprint page never answers: the same `gway_req_` form. */
function fingerprintTimeoutSource(url: string): string {
  const request = {
    url,
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: 'threeDSMethodData={"threeDS2FingerprintTimeout":true}',
  };
  return `gway_req_${btoa(JSON.stringify(request))}`;
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" && value !== "" ? value : fallback;
}

/** The browser data 3-D Secure 2 uses, as the web library gathers it. */
function deviceData(): Record<string, unknown> {
  return {
    request_origin: "web",
    app_color_depth: window.screen.colorDepth,
    app_language: navigator.language,
    app_screen_height: window.screen.height,
    app_screen_width: window.screen.width,
    app_timezone_offset: new Date().getTimezoneOffset(),
    app_java_enabled: false,
  };
}

/** A modal dialog around the challenge's frame, with a way out (Escape, or Cancel). */
function challengeDialog(frame: HTMLIFrameElement): HTMLDialogElement {
  const dialog = document.createElement("dialog");
  dialog.setAttribute("aria-label", "Payment verification");
  Object.assign(dialog.style, {
    width: "min(28rem, 100vw - 1rem)",
    maxHeight: "calc(100vh - 1rem)",
    padding: "0",
    border: "none",
    borderRadius: "0.5rem",
    boxSizing: "border-box",
  });
  Object.assign(frame.style, {
    display: "block",
    width: "100%",
    height: "min(30rem, 100vh - 5rem)",
    border: "0",
  });
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.textContent = "Cancel";
  Object.assign(cancel.style, {
    display: "block",
    margin: "0.5rem auto",
    padding: "0.5rem 1.5rem",
    font: "inherit",
  });
  cancel.addEventListener("click", () => dialog.dispatchEvent(new Event("cancel")));
  dialog.append(frame, cancel);
  return dialog;
}
