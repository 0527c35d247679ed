import { listCertificates } from "../../shared/applepay/certificates.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /projects/applepay/alternative-merchant-certificates */
export const handler = api(async (request) =>
  ok({ applepay_certificates: await listCertificates(request.caller) }),
);
