import { getCertificate } from "../../shared/applepay/certificates.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /projects/applepay/alternative-merchant-certificates/{certificate_id}: with its CSR. */
export const handler = api(async (request) =>
  ok({
    alternative_merchant_certificate: await getCertificate(request.caller, request.path.certificate_id ?? ""),
  }),
);
