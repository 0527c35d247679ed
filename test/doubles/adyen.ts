import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stateful double of Adyen's Checkout API v71, for the `adyen` connector's tests and for
 * `npm start` without an Adyen account (`npx tsx test/doubles/serve.ts`). It follows Adyen's
 * documented behaviour for what the connector uses: `/payments` with raw card data and manual
 * capture, refusals by Adyen's test holder names (`HOLDER_NAMES`) with their `refusalReasonCode`
 * and the scheme's raw response, 3-D Secure by redirect (its page at `/double/3ds/{psp}`, then
 * `/payments/details` with `redirectResult`), modifications answered `received` and decided by a
 * webhook, `Idempotency-Key`, and standard webhooks signed with the HMAC key, sent to the endpoint
 * registered with `setWebhook` when `deliverNotifications` is called (or after `autoDeliverMs`).
 *
 * Not Adyen: it proves the connector's logic against Adyen's documented semantics; the contract
 * tests prove its requests against Adyen's OpenAPI document (`../shared/tools/adyen`).
 */

/** Adyen's test holder names that trigger refusals, with the reason and the scheme's raw code. */
export const HOLDER_NAMES: Readonly<Record<string, { reason: string; code: string; raw: string }>> = {
  DECLINED: { reason: "Refused", code: "2", raw: "05 : Do not honor" },
  NOT_ENOUGH_BALANCE: { reason: "Not enough balance", code: "12", raw: "51 : Insufficient funds" },
  BLOCK_CARD: { reason: "Blocked Card", code: "5", raw: "62 : Restricted card" },
  CARD_EXPIRED: { reason: "Expired Card", code: "6", raw: "54 : Expired card" },
  CVC_DECLINED: { reason: "CVC Declined", code: "24", raw: "N7 : Decline for CVV2 failure" },
  ISSUER_UNAVAILABLE: { reason: "Issuer Unavailable", code: "9", raw: "91 : Issuer unavailable" },
  FRAUD: { reason: "FRAUD", code: "20", raw: "59 : Suspected fraud" },
};

/** Adyen's 3-D Secure 2 test card: the issuer asks for a challenge. */
export const THREE_DS_CARD = "4917610000000000";
/** Not an Adyen test value: a holder name whose captures fail (CAPTURE_FAILED webhook). */
export const CAPTURE_FAILS_HOLDER = "CAPTURE FAILS";

interface Payment {
  pspReference: string;
  reference: string;
  merchantAccount: string;
  amount: { value: number; currency: string };
  holderName: string;
  number: string;
  preAuth: boolean;
  status: "authorised" | "refused" | "redirect" | "captured" | "cancelled";
  captured: number;
  refunded: number;
  returnUrl: string;
  metadata: Record<string, string>;
}

export interface Notification {
  eventCode: string;
  success: "true" | "false";
  pspReference: string;
  originalReference?: string;
  merchantReference: string;
  merchantAccountCode: string;
  amount: { value: number; currency: string };
  reason?: string;
  additionalData: Record<string, string>;
}

export interface AdyenDouble {
  url: string;
  /** Every request received: path, body, idempotency key. */
  requests: Array<{ path: string; body: Record<string, unknown>; idempotencyKey?: string }>;
  payments(): Payment[];
  /** Webhooks go to `url`, signed with `hmacKeyHex`; `live` is what the batches say. */
  setWebhook(url: string, hmacKeyHex: string, live?: boolean): void;
  /** Sends the queued notifications (one batch each) and answers each delivery's status. */
  deliverNotifications(): Promise<number[]>;
  /** The notifications queued and not yet delivered. */
  queued(): Notification[];
  /**
   * The next request whose path contains `pathPart` is processed, then answered never (the client
   * times out) or with a 500 before processing (`error-500`).
   */
  injectFault(pathPart: string, fault: "hang-after-processing" | "error-500"): void;
  close(): Promise<void>;
}

/**
 * `latencyMs`: every API answer waits this long first; `autoDeliverMs`: notifications are sent that
 * long after they are made, without the test calling `deliverNotifications`.
 */
export async function startAdyenDouble(
  options: { port?: number; autoDeliverMs?: number; latencyMs?: number } = {},
): Promise<AdyenDouble> {
  const payments = new Map<string, Payment>();
  const byReference = new Map<string, Payment>();
  const idempotent = new Map<string, { fingerprint: string; status: number; body: unknown }>();
  const requests: AdyenDouble["requests"] = [];
  const faults: Array<{ pathPart: string; fault: "hang-after-processing" | "error-500" }> = [];
  let queue: Notification[] = [];
  let webhook: { url: string; hmacKey: string; live: boolean } | undefined;
  let base = "";
  let timer: NodeJS.Timeout | undefined;

  const psp = () => randomBytes(8).toString("hex").toUpperCase();

  function notify(notification: Notification) {
    queue.push(notification);
    if (options.autoDeliverMs !== undefined && !timer) {
      timer = setTimeout(() => {
        timer = undefined;
        void deliverNotifications();
      }, options.autoDeliverMs);
    }
  }

  function sign(item: Notification, hmacKey: string): string {
    const text = [
      item.pspReference,
      item.originalReference ?? "",
      item.merchantAccountCode,
      item.merchantReference,
      String(item.amount.value),
      item.amount.currency,
      item.eventCode,
      item.success,
    ].join(":");
    return createHmac("sha256", Buffer.from(hmacKey, "hex")).update(text).digest("base64");
  }

  async function deliverNotifications(): Promise<number[]> {
    const sending = queue;
    queue = [];
    const statuses: number[] = [];
    if (!webhook) return statuses;
    for (const item of sending) {
      const signed = {
        ...item,
        additionalData: { ...item.additionalData, hmacSignature: sign(item, webhook.hmacKey) },
      };
      try {
        const answer = await fetch(webhook.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            live: String(webhook.live),
            notificationItems: [{ NotificationRequestItem: signed }],
          }),
        });
        statuses.push(answer.status);
        // Adyen sends again what was not accepted.
        if (answer.status >= 300) queue.push(item);
      } catch {
        statuses.push(0);
        queue.push(item);
      }
    }
    return statuses;
  }

  type Answer = { status: number; body: unknown };
  const error = (status: number, errorCode: string, message: string): Answer => ({
    status,
    body: { status, errorCode, message, errorType: status === 401 ? "security" : "validation" },
  });

  function authorisationResult(payment: Payment): Answer {
    const refusal = HOLDER_NAMES[payment.holderName];
    const authorised = !refusal;
    payment.status = authorised ? "authorised" : "refused";
    notify({
      eventCode: "AUTHORISATION",
      success: authorised ? "true" : "false",
      pspReference: payment.pspReference,
      merchantReference: payment.reference,
      merchantAccountCode: payment.merchantAccount,
      amount: payment.amount,
      ...(refusal ? { reason: refusal.reason } : {}),
      additionalData: Object.fromEntries(
        Object.entries(payment.metadata).map(([key, value]) => [`metadata.${key}`, value]),
      ),
    });
    return {
      status: 200,
      body: {
        pspReference: payment.pspReference,
        merchantReference: payment.reference,
        resultCode: authorised ? "Authorised" : "Refused",
        amount: payment.amount,
        ...(refusal ? { refusalReason: refusal.reason, refusalReasonCode: refusal.code } : {}),
        additionalData: {
          cvcResult: "1 Matches",
          avsResult: "4 AVS not supported for this card type",
          networkTxReference: `NTR${payment.pspReference}`,
          ...(refusal ? { refusalReasonRaw: refusal.raw } : {}),
        },
      },
    };
  }

  // biome-ignore lint/suspicious/noExplicitAny: Adyen's request bodies are read field by field, as Adyen reads them
  function route(path: string, body: Record<string, any>): Answer {
    if (path === "/payments") {
      const card = body.paymentMethod ?? {};
      const payment: Payment = {
        pspReference: psp(),
        reference: String(body.reference),
        merchantAccount: String(body.merchantAccount),
        amount: body.amount,
        holderName: String(card.holderName ?? ""),
        number: String(card.number ?? ""),
        // Not Adyen's rule, the double's: only Visa cards take amount updates here.
        preAuth:
          body.additionalData?.authorisationType === "PreAuth" && String(card.number ?? "").startsWith("4"),
        status: "authorised",
        captured: 0,
        refunded: 0,
        returnUrl: String(body.returnUrl ?? ""),
        metadata: body.metadata ?? {},
      };
      if (!/^\d{12,19}$/.test(payment.number)) return error(422, "101", "Invalid card number");
      payments.set(payment.pspReference, payment);
      byReference.set(payment.reference, payment);
      const ecommerce = body.shopperInteraction !== "ContAuth";
      if (payment.number === THREE_DS_CARD && ecommerce) {
        payment.status = "redirect";
        return {
          status: 200,
          body: {
            resultCode: "RedirectShopper",
            pspReference: payment.pspReference,
            merchantReference: payment.reference,
            action: {
              type: "redirect",
              method: "GET",
              url: `${base}/double/3ds/${payment.pspReference}`,
              paymentMethodType: "scheme",
            },
          },
        };
      }
      if (payment.number === THREE_DS_CARD) {
        payment.status = "refused";
        return {
          status: 200,
          body: {
            resultCode: "Refused",
            pspReference: payment.pspReference,
            refusalReason: "Authentication required",
            refusalReasonCode: "38",
          },
        };
      }
      return authorisationResult(payment);
    }
    if (path === "/payments/details") {
      const result = String(body.details?.redirectResult ?? "");
      const [pspReference, answer] = Buffer.from(result, "base64url").toString("utf8").split(":");
      const payment = payments.get(pspReference ?? "");
      if (payment?.status !== "redirect") return error(422, "14_018", "Invalid redirectResult");
      if (answer !== "approved") {
        payment.status = "refused";
        return {
          status: 200,
          body: {
            resultCode: "Refused",
            pspReference: payment.pspReference,
            merchantReference: payment.reference,
            refusalReason: "3D Not Authenticated",
            refusalReasonCode: "11",
          },
        };
      }
      const authorised = authorisationResult(payment);
      (authorised.body as { additionalData: Record<string, string> }).additionalData.threeDAuthenticated =
        "true";
      return authorised;
    }
    const modification = path.match(/^\/payments\/([^/]+)\/(captures|cancels|refunds|amountUpdates)$/);
    if (modification) {
      const payment = payments.get(decodeURIComponent(modification[1] ?? ""));
      if (!payment) return error(422, "167", "Original pspReference required for this operation");
      const kind = modification[2];
      const amount = body.amount ?? payment.amount;
      const reference = String(body.reference ?? "");
      const item = (eventCode: string, success: boolean, reason?: string): Notification => ({
        eventCode,
        success: success ? "true" : "false",
        pspReference: psp(),
        originalReference: payment.pspReference,
        merchantReference: reference,
        merchantAccountCode: payment.merchantAccount,
        amount,
        ...(reason ? { reason } : {}),
        additionalData: {},
      });
      if (kind === "captures") {
        if (payment.status !== "authorised")
          return error(422, "167", "Original pspReference required for this operation");
        const fails = payment.holderName === CAPTURE_FAILS_HOLDER;
        if (!fails) {
          payment.status = "captured";
          payment.captured = amount.value;
        }
        notify(
          fails ? item("CAPTURE_FAILED", true, "Capture failed at the acquirer") : item("CAPTURE", true),
        );
      } else if (kind === "cancels") {
        if (payment.status !== "authorised")
          return error(422, "167", "Original pspReference required for this operation");
        payment.status = "cancelled";
        notify(item("CANCELLATION", true));
      } else if (kind === "refunds") {
        const left = payment.captured - payment.refunded;
        const ok = payment.status === "captured" && amount.value <= left;
        if (ok) payment.refunded += amount.value;
        notify(item("REFUND", ok, ok ? undefined : "Insufficient in process refund amount"));
      } else {
        if (!payment.preAuth || payment.status !== "authorised")
          return error(422, "905_3", "Amount update not allowed: the payment is not a pre-authorisation");
        payment.amount = amount;
        notify(item("AUTHORISATION_ADJUSTMENT", true));
      }
      const answered = {
        status: "received",
        pspReference: psp(),
        reference,
        merchantAccount: payment.merchantAccount,
        paymentPspReference: payment.pspReference,
      };
      return { status: 201, body: kind === "cancels" ? answered : { ...answered, amount } };
    }
    return error(404, "000", `No such endpoint ${path}`);
  }

  const server: Server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://double");
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");

    if (request.method === "POST" && url.pathname === "/double/webhook") {
      // For a developer's stack (`serve.ts`): where to send notifications, signed with which key.
      const given = JSON.parse(raw || "{}") as { url?: string; hmac_key?: string; live?: boolean };
      if (!given.url || !given.hmac_key) {
        send(response, 400, { message: "url and hmac_key are required" });
        return;
      }
      webhook = { url: given.url, hmacKey: given.hmac_key, live: given.live === true };
      send(response, 200, { url: given.url });
      return;
    }
    const page = url.pathname.match(/^\/double\/3ds\/([^/]+)$/);
    if (page) {
      const payment = payments.get(decodeURIComponent(page[1] ?? ""));
      const answer = url.searchParams.get("answer");
      if (payment?.status !== "redirect") {
        response.writeHead(404).end("No such authentication");
        return;
      }
      if (answer !== "approve" && answer !== "fail") {
        response
          .writeHead(200, { "content-type": "text/html" })
          .end(
            '<!doctype html><title>Adyen test authentication</title><h1>3D Secure 2 test</h1><a id="approve" href="?answer=approve">Authenticate</a> <a id="fail" href="?answer=fail">Fail</a>',
          );
        return;
      }
      const target = new URL(payment.returnUrl);
      const result = Buffer.from(
        `${payment.pspReference}:${answer === "approve" ? "approved" : "failed"}`,
      ).toString("base64url");
      target.searchParams.set("redirectResult", result);
      response.writeHead(302, { location: target.toString() }).end();
      return;
    }
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    if (!request.headers["x-api-key"]) {
      send(response, 401, {
        status: 401,
        errorCode: "000",
        message: "HTTP Status Response - Unauthorized",
        errorType: "security",
      });
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      send(response, 400, {
        status: 400,
        errorCode: "702",
        message: "Structure of the request is invalid",
        errorType: "validation",
      });
      return;
    }
    const path = url.pathname.replace(/^\/v71/, "");
    const idempotencyKey = request.headers["idempotency-key"] as string | undefined;
    requests.push({ path, body, ...(idempotencyKey ? { idempotencyKey } : {}) });
    const faultIndex = faults.findIndex((fault) => path.includes(fault.pathPart));
    const fault = faultIndex >= 0 ? faults.splice(faultIndex, 1)[0]?.fault : undefined;
    if (fault === "error-500") {
      send(response, 500, {
        status: 500,
        errorCode: "905",
        message: "Internal error",
        errorType: "internal",
      });
      return;
    }
    const earlier = idempotencyKey ? idempotent.get(idempotencyKey) : undefined;
    let answer: Answer;
    if (earlier && earlier.fingerprint !== `${path} ${raw}`) {
      answer = error(422, "704", "Request already processed or in progress with a different payload");
    } else if (earlier) {
      answer = { status: earlier.status, body: earlier.body };
    } else {
      answer = route(path, body);
      if (idempotencyKey && answer.status < 500)
        idempotent.set(idempotencyKey, { fingerprint: `${path} ${raw}`, ...answer });
    }
    if (fault === "hang-after-processing") return; // the client's timeout ends it
    send(response, answer.status, answer.body);
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/v71`,
    requests,
    payments: () => [...payments.values()],
    setWebhook: (url, hmacKey, live = false) => {
      webhook = { url, hmacKey, live };
    },
    deliverNotifications,
    queued: () => [...queue],
    injectFault: (pathPart, fault) => {
      faults.push({ pathPart, fault });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (timer) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(response: ServerResponse, status: number, body: unknown) {
  response
    .writeHead(status, { "content-type": "application/json", pspReference: randomBytes(8).toString("hex") })
    .end(JSON.stringify(body));
}
