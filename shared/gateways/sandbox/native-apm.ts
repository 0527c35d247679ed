import type { NativeApmParameter, NativePaymentOutcome, NativePaymentRequest } from "../connector.ts";
import { declined, gatewayReference } from "./test-cards.ts";

/**
 * The sandbox native APM, as the spec describes it: the first step takes `email` (its
 * `native_apm_config`); only `native-apm-success@example.com` goes on, any other address simulates
 * a refusal (the customer can try again). The provider then asks for a 6-digit `token` (and an
 * optional `name`): any 6 digits confirm the payment, `000000` simulates a wrong code. A confirmed
 * payment awaits its capture (`POST /invoices/{id}/capture` with the configuration as source); the
 * sandbox sends no webhook for it.
 */
export const SANDBOX_APM_SUCCESS_EMAIL = "native-apm-success@example.com";
export const SANDBOX_APM_REFUSED_TOKEN = "000000";

/** What the sandbox APM's configurations ask for first. */
export const SANDBOX_APM_PARAMETERS: readonly NativeApmParameter[] = [
  { key: "email", type: "email", length: null, required: true },
];

/** What it asks for once the email is accepted. */
export const SANDBOX_APM_CONFIRMATION: readonly NativeApmParameter[] = [
  { key: "token", type: "numeric", length: 6, required: true },
  { key: "name", type: "string", length: null, required: false },
];

export function decideNativePayment(request: NativePaymentRequest): NativePaymentOutcome {
  if (request.step === "initial") {
    if (request.values.email?.toLowerCase() !== SANDBOX_APM_SUCCESS_EMAIL) {
      return declined(
        "gateway.declined",
        `The sandbox APM refused the payment for this email address (only ${SANDBOX_APM_SUCCESS_EMAIL} is accepted).`,
      );
    }
    return {
      status: "customer-input",
      parameters: [...SANDBOX_APM_CONFIRMATION],
      message: "Enter the 6-digit code sent to your email address.",
    };
  }
  if (request.values.token === SANDBOX_APM_REFUSED_TOKEN) {
    return declined("gateway.declined", "The sandbox APM refused the code: it is not the one it sent.");
  }
  return {
    status: "pending-capture",
    gatewayReference: gatewayReference("normal", request.reference),
    message: "The payment is confirmed and awaits its capture.",
  };
}
