import { CUSTOMER_EXPANSIONS, getCustomer } from "../../shared/customers/service.ts";
import { api } from "../../shared/http/api.ts";
import { readExpand } from "../../shared/http/expand.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /customers/{customer_id} */
export const handler = api(async (request) => {
  const expand = readExpand(request, CUSTOMER_EXPANSIONS);
  const customer = await getCustomer(request.caller, request.path.customer_id ?? "", expand);
  return ok({ customer });
});
