import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { nativePaymentDetails } from "../../shared/payments/native.ts";

/** GET /invoices/{invoice_id}/native-payment/{gateway_configuration_id} */
export const handler = api(
  (request) =>
    nativePaymentDetails(
      request.caller,
      request.path.invoice_id ?? "",
      request.path.gateway_configuration_id ?? "",
    ),
  { expand: expandAnswer("transaction") },
);
