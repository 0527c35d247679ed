import { findCard } from "../cards/store.ts";
import type { Input } from "../http/input.ts";
import type { HtmlReply } from "../http/reply.ts";
import { findInvoice } from "../invoices/store.ts";
import { answeredPage, challengeNotFoundPage, challengePage, invalidAnswerPage } from "./challenge-page.ts";
import {
  commitTransition,
  findChallenge,
  findTransactionRecord,
  transitionWrite,
  type VersionedTransaction,
} from "./store.ts";
import { challengeAnswered } from "./transaction.ts";

/**
 * The sandbox 3DS challenge page (`GET` and `POST /3ds/{token}`), reached without credentials: the
 * unguessable token in its address is what lets the shopper answer. The answer is recorded on the
 * transaction, which the next authorize of the invoice passes to the connector (see
 * `runAuthorization` in `authorize.ts`): approved → authorized, failed → declined with
 * `card.failed-three-d-s`.
 */

/** The transaction still waiting for the answer to this very challenge; undefined otherwise. */
async function awaitingTransaction(token: string): Promise<VersionedTransaction | undefined> {
  const challenge = await findChallenge(token);
  if (!challenge) return undefined;
  const found = await findTransactionRecord(challenge.scope, challenge.transactionId);
  if (!found || !isAwaiting(found, token)) return undefined;
  return found;
}

function isAwaiting({ record }: VersionedTransaction, token: string): boolean {
  return (
    record.status === "waiting" &&
    record.pending === null &&
    record.challenge?.token === token &&
    record.challenge.result === null
  );
}

async function returnUrlOf(current: VersionedTransaction): Promise<string | null> {
  const found = await findInvoice(current.record.project_id, current.record.invoice_id);
  return found?.invoice.return_url ?? null;
}

/** `GET /3ds/{token}` */
export async function showChallenge(token: string): Promise<HtmlReply> {
  const current = await awaitingTransaction(token);
  if (!current) return challengeNotFoundPage();
  const { record } = current;
  const [card, returnUrl] = await Promise.all([
    record.card_id ? findCard(record.project_id, record.card_id) : undefined,
    returnUrlOf(current),
  ]);
  return challengePage({
    invoiceName: record.name,
    amount: record.amount,
    currency: record.currency,
    cardLast4: card?.card.last_4_digits ?? "????",
    returnUrl,
  });
}

/**
 * `POST /3ds/{token}` with `result` = `approved` or `failed`: one conditional write of the
 * transaction, on the version read while it awaited this challenge, so an answer is recorded once
 * and only while the challenge is open; a second answer finds the page gone (404).
 */
export async function answerChallenge(token: string, body: Input): Promise<HtmlReply> {
  const result = body.result;
  if (result !== "approved" && result !== "failed") return invalidAnswerPage();
  const current = await awaitingTransaction(token);
  if (!current) return challengeNotFoundPage();
  const next = challengeAnswered(current.record, result);
  const outcome = await commitTransition([
    transitionWrite(current, next, { status: "waiting", pending: null }),
  ]);
  if (outcome !== "committed") return challengeNotFoundPage();
  return answeredPage(result, await returnUrlOf(current));
}
