import { deleteCertificate } from "../../shared/applepay/certificates.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** DELETE /projects/applepay/alternative-merchant-certificates/{certificate_id} */
export const handler = api(async (request) => {
  await deleteCertificate(request.caller, request.path.certificate_id ?? "");
  return ok({});
});
