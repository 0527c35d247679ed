import { transactWrite } from "../db/transactions.ts";
import { configurationForPayment } from "../gateways/routing.ts";
import { ApiError, conflict, invalidField, privateKeyRequired } from "../http/errors.ts";
import type { Reply } from "../http/reply.ts";
import { isId } from "../ids.ts";
import { compareAmounts } from "../money.ts";
import { parseInput } from "../validation/parse.ts";
import { authorizeStep, autoCaptureOptions, cardPaymentOptions, readPayment } from "./authorize.ts";
import { cancelAutoCapture } from "./auto-capture.ts";
import {
  checkAmount,
  type Payment,
  type PaymentRequest,
  paymentOf,
  paymentReply,
  recordedDecline,
  wrongState,
} from "./core.ts";
import { type FollowUpPlan, followUp } from "./follow-up.ts";
import { captureInput } from "./schema.ts";
import type { VersionedTransaction } from "./store.ts";
import { CAPTURE_WINDOW_MS, capturedFor, paymentMethodOf } from "./transaction.ts";

/**
 * `POST /invoices/{id}/capture`: captures the invoice's authorization (all of it, or `amount`),
 * within 7 days of it. With a card or customer token `source` on an invoice not yet authorized,
 * authorizes it first. With a native APM configuration as source (`<id>.<gateway>`), captures the
 * native payment it confirmed (PENDING_CAPTURE).
 */
export async function captureInvoice(
  request: PaymentRequest,
  invoiceId: string,
  input: unknown,
): Promise<Reply> {
  const fields = parseInput(captureInput, input);
  const authorizeOnly = fields.authorize_only === true || Boolean(fields.auto_capture_at);
  if (authorizeOnly && fields.amount) {
    throw invalidField("amount", "applies to a capture now: not with authorize_only or auto_capture_at");
  }
  const native = fields.source && isId("gatewayConfiguration", fields.source.split(".")[0] ?? "");
  const options = fields.source && !native ? cardPaymentOptions(request, fields) : undefined;
  // The shopper's browser or app captures only the payment it makes with a card (or its 3DS answer).
  if (request.credential === "public-key" && !options)
    throw privateKeyRequired("capture without a card source");
  if (authorizeOnly && !options) throw invalidField("source", "is required to authorize", "missing-source");
  const read = options
    ? await readPayment(request, invoiceId, options)
    : { payment: await paymentOf(request.caller, invoiceId) };
  const { invoice } = read.payment;
  if (fields.amount) checkAmount("amount", fields.amount, invoice.currency);
  // A source authorizes the invoice's amount first: a capture of more is refused before anything moves.
  const authorized = read.payment.current?.record.status === "authorized";
  if (options && fields.amount && !authorized && compareAmounts(fields.amount, invoice.amount) > 0) {
    throw invalidField("amount", `must be at most the invoice's amount, ${invoice.amount}`);
  }
  if (authorizeOnly && options) {
    // Only the authorization, as `POST /authorize` makes it (the capture comes later, if asked for).
    const autoCapture = autoCaptureOptions(request, invoice, fields);
    const result = await authorizeStep(request, read, { ...options, ...autoCapture }, "authorize");
    if ("answer" in result) return result.answer;
    const reply = paymentReply(result.current.record);
    await transactWrite(request.commit(reply));
    return reply;
  }
  if (fields.capture_amount) throw invalidField("capture_amount", "applies only with auto_capture_at");
  let current: VersionedTransaction | undefined;
  if (native && fields.source) {
    current = await nativePaymentToCapture(request, read.payment, fields.source);
  } else if (options) {
    // The capture is chained to the authorization: made right after its approval, settled with it.
    const capture = { plan: capturePlan(fields.amount ?? undefined), amount: fields.amount ?? null };
    const result = await authorizeStep(request, read, { ...options, capture }, "capture");
    if ("answer" in result) return result.answer;
    if (result.captured) {
      await cancelAutoCapture(result.current.record);
      return paymentReply(result.current.record);
    }
    current = result.current;
  } else {
    current = read.payment.current;
  }
  if (!current) {
    throw new ApiError(
      400,
      "request.invoice.not-authorized",
      `Invoice ${invoice.id} has no authorization to capture: send a source.`,
    );
  }
  if (current.record.status === "failed") throw recordedDecline(current.record);
  if (capturedFor(current.record, request.requestKey)) {
    // This request's own capture, settled after it was cut off (by the recovery job): its answer.
    const reply = paymentReply(current.record);
    await transactWrite(request.commit(reply));
    return reply;
  }
  const record = await followUp(request, invoice, current, capturePlan(fields.amount ?? undefined));
  await cancelAutoCapture(record);
  return paymentReply(record);
}

/** The native payment through the configuration `source` names: it must be this invoice's. */
async function nativePaymentToCapture(
  request: PaymentRequest,
  { invoice, current }: Payment,
  source: string,
): Promise<VersionedTransaction> {
  // A configuration disabled or deleted since the payment was confirmed still captures it.
  const configuration = await configurationForPayment(
    request.caller.projectId,
    source,
    "native-apm",
    "source",
    current?.record,
  );
  if (!current || current.record.gateway_configuration_id !== configuration.id) {
    throw new ApiError(
      400,
      "request.invoice.not-authorized",
      `Invoice ${invoice.id} has no native payment through ${configuration.id} to capture.`,
    );
  }
  return current;
}

/**
 * Capture `amount` (default: all that is authorized) of a card authorization within its window, or
 * of a native APM payment its provider confirmed (PENDING_CAPTURE).
 */
export function capturePlan(amount: string | undefined): FollowUpPlan {
  return {
    type: "capture",
    amount: (record) => amount ?? record.authorized_amount,
    allowed: (record, captured, now) => {
      if (paymentMethodOf(record) === "native-apm") {
        if (record.status !== "pending") {
          throw conflict(
            "request.transaction.invalid-state",
            `The native payment of transaction ${record.id} is ${record.native_apm?.state ?? record.status}: it can be captured once its state is PENDING_CAPTURE.`,
          );
        }
      } else {
        if (record.status !== "authorized") throw wrongState(record, "captured");
        const deadline = Date.parse(record.authorized_at ?? "") + CAPTURE_WINDOW_MS;
        if (now.getTime() >= deadline) {
          throw conflict(
            "request.transaction.capture-window-expired",
            `The authorization of transaction ${record.id} is older than 7 days: it can no longer be captured.`,
          );
        }
      }
      // The write's condition guards it too; checked here so the answer names the field.
      if (compareAmounts(captured, record.authorized_amount) > 0) {
        throw invalidField("amount", `must be at most the authorized amount, ${record.authorized_amount}`);
      }
    },
  };
}
