import { activateCertificate } from "../../shared/applepay/issuing.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** PUT /projects/applepay/alternative-merchant-certificates/{certificate_id} with Apple's `certificate`. */
export const handler = api(async (request) =>
  ok({
    alternative_merchant_certificate: await activateCertificate(
      request.caller,
      request.path.certificate_id ?? "",
      request.body,
    ),
  }),
);
