import { findCard } from "../cards/store.ts";
import type { ThreeDSRound, ThreeDSRoundAnswer } from "../gateways/connector.ts";
import type { Input } from "../http/input.ts";
import type { HtmlReply } from "../http/reply.ts";
import { findInvoice } from "../invoices/store.ts";
import { fingerprintUrl, openRound as openRoundOf, type ThreeDSExchange } from "../three-d-s/exchange.ts";
import { browserFingerprintAnswer } from "../three-d-s/gateway-request.ts";
import {
  answeredPage,
  type ChallengeSummary,
  challengeNotFoundPage,
  challengePage,
  fingerprintPage,
  invalidAnswerPage,
  returnedPage,
} from "../three-d-s/pages.ts";
import { type ExchangeHolder, findExchangeHolder } from "../three-d-s/store.ts";
import { findVersionedToken, recordTokenAnswer } from "../tokens/store.ts";
import { commitTransition, findTransactionRecord, transitionWrite } from "./store.ts";
import { openRound, threeDSAnswered } from "./transaction.ts";

/**
 * The sandbox 3DS pages, reached without credentials: the unguessable token in their address is what
 * lets the shopper's browser in. The token names a 3DS exchange, held by a payment's transaction or
 * by a customer token being verified (`three-d-s/store.ts`).
 *
 * - the challenge page (`GET` and `POST /3ds/{token}`, `customer_action` of type `url`): the answer
 *   is recorded on the holder, and the next authorize of the invoice (or `PUT` of the token) passes
 *   it to the connector: approved → authorized (verified), failed → declined with
 *   `card.failed-three-d-s`.
 * - the browser's 3DS method page (`GET /3ds/{token}/fingerprint`, type `fingerprint`): records
 *   nothing; it hands the browser the `gway_req_` answer bound to its own address, which the next
 *   authorize (or `PUT`) takes as its source.
 */

/** An exchange waiting for the answer to one of its rounds, and how to record it on its holder. */
interface Waiting {
  exchange: ThreeDSExchange;
  summary(): Promise<ChallengeSummary>;
  returnUrl(): Promise<string | null>;
  /** Records the answer on the version read while waiting: false when it changed meanwhile. */
  record(answer: ThreeDSRoundAnswer): Promise<boolean>;
}

/** The exchange of `token` while it waits for an answer to `round`; undefined otherwise. */
async function waitingFor(token: string, round: ThreeDSRound): Promise<Waiting | undefined> {
  const holder = await findExchangeHolder(token);
  if (!holder) return undefined;
  const waiting = holder.kind === "transaction" ? await paymentWaiting(holder) : await tokenWaiting(holder);
  if (!waiting || waiting.exchange.token !== token || openRoundOf(waiting.exchange) !== round)
    return undefined;
  return waiting;
}

async function paymentWaiting(
  holder: Extract<ExchangeHolder, { kind: "transaction" }>,
): Promise<Waiting | undefined> {
  const current = await findTransactionRecord(holder.scope, holder.transactionId);
  const record = current?.record;
  if (!current || !record?.authentication || openRound(record) === undefined) return undefined;
  const returnUrl = async () =>
    (await findInvoice(record.project_id, record.invoice_id))?.invoice.return_url ?? null;
  return {
    exchange: record.authentication,
    returnUrl,
    summary: async () => {
      const [card, url] = await Promise.all([
        record.card_id ? findCard(record.project_id, record.card_id) : undefined,
        returnUrl(),
      ]);
      return {
        payment: { invoiceName: record.name, amount: record.amount, currency: record.currency },
        cardLast4: card?.card.last_4_digits ?? "????",
        returnUrl: url,
      };
    },
    record: async (answer) =>
      (await commitTransition([
        transitionWrite(current, threeDSAnswered(record, answer), { status: "waiting", pending: null }),
      ])) === "committed",
  };
}

async function tokenWaiting(
  holder: Extract<ExchangeHolder, { kind: "token" }>,
): Promise<Waiting | undefined> {
  const found = await findVersionedToken(holder.scope, holder.customerId, holder.tokenId);
  const exchange = found?.token.three_d_s;
  if (!found || !exchange || exchange.ended !== null || found.token.verification_status !== "pending") {
    return undefined;
  }
  const { token, version } = found;
  return {
    exchange,
    returnUrl: async () => token.return_url,
    summary: async () => {
      const card = await findCard(token.project_id, exchange.card_id);
      return { payment: null, cardLast4: card?.card.last_4_digits ?? "????", returnUrl: token.return_url };
    },
    record: (answer) => recordTokenAnswer(token, { ...exchange, answer }, version, new Date()),
  };
}

/** `GET /3ds/{token}` */
export async function showChallenge(token: string): Promise<HtmlReply> {
  const waiting = await waitingFor(token, "challenge-page");
  if (!waiting) return challengeNotFoundPage();
  return challengePage(await waiting.summary());
}

/**
 * `POST /3ds/{token}` with `result` = `approved` or `failed`: one conditional write of the holder,
 * on the version read while it awaited this challenge, so an answer is recorded once and only while
 * the challenge is open; a second answer finds the page gone (404). `framed`: the page was posted
 * in a frame (`Sec-Fetch-Dest: iframe`), so it tells its parent instead of leaving for the
 * `return_url`.
 */
export async function answerChallenge(token: string, body: Input, framed: boolean): Promise<HtmlReply> {
  const result = body.result;
  if (result !== "approved" && result !== "failed") return invalidAnswerPage();
  const waiting = await waitingFor(token, "challenge-page");
  if (!waiting) return challengeNotFoundPage();
  const recorded = await waiting.record({ kind: "challenge-page", approved: result === "approved" });
  if (!recorded) return challengeNotFoundPage();
  return answeredPage(result, await waiting.returnUrl(), framed);
}

/** What a provider may put in the query of its return address (Adyen's `redirectResult`, Stripe's ids). */
const RETURN_PARAMETERS = ["redirectResult", "payload", "payment_intent", "setup_intent", "MD", "PaRes"];
const MAX_RETURN_PARAMETER_LENGTH = 8_192;

/**
 * `GET /3ds/{token}/return`: the cardholder is back from a provider's authentication page. The
 * return is recorded once, as the answer to the exchange's open round (with what the provider put
 * in the query, for the connector to complete the payment with), on the version read while it
 * waited; the next attempt (the payment sent again, as after any challenge) asks the provider how
 * the authentication ended. A second return finds the page gone (404).
 */
export async function returnFromProvider(token: string, query: Input, framed: boolean): Promise<HtmlReply> {
  const waiting = await waitingFor(token, "provider-redirect");
  if (!waiting) return challengeNotFoundPage();
  const params = Object.fromEntries(
    RETURN_PARAMETERS.flatMap((name) => {
      const value = query[name];
      return typeof value === "string" && value.length <= MAX_RETURN_PARAMETER_LENGTH ? [[name, value]] : [];
    }),
  );
  const recorded = await waiting.record({ kind: "provider-redirect", params });
  if (!recorded) return challengeNotFoundPage();
  return returnedPage(await waiting.returnUrl(), framed);
}

/** `GET /3ds/{token}/fingerprint`: the 3DS method page of a browser exchange waiting for it. */
export async function showFingerprint(token: string): Promise<HtmlReply> {
  const waiting = await waitingFor(token, "fingerprint");
  if (waiting?.exchange.channel !== "browser-3ds2") return challengeNotFoundPage();
  return fingerprintPage(browserFingerprintAnswer(fingerprintUrl(token)));
}
