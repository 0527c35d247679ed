import { removeCustomer } from "../../shared/customers/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** DELETE /customers/{customer_id} */
export const handler = api(async (request) => {
  await removeCustomer(request.caller, request.path.customer_id ?? "");
  return ok({});
});
