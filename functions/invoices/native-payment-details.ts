import { expandAnswer } from "../../shared/expansion/answer.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { nativePaymentDetails } from "../../shared/payments/native.ts";

/** GET /invoices/{invoice_id}/native-payment/{gateway_configuration_id} (the public key too) */
export const handler = api(
  (request) =>
    nativePaymentDetails(
      request.caller,
      request.path.invoice_id ?? "",
      request.path.gateway_configuration_id ?? "",
    ),
  { publicKey: PUBLIC_KEY_ACCESS.nativePayment, expand: expandAnswer("transaction") },
);
