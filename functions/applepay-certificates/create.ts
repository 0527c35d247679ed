import { createCertificate } from "../../shared/applepay/issuing.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** POST /projects/applepay/alternative-merchant-certificates (an empty body): a key pair and its CSR. */
export const handler = api(async (request) =>
  ok({ alternative_merchant_certificate: await createCertificate(request.caller) }),
);
