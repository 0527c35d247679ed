import { getCustomer } from "../../shared/customers/service.ts";
import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /customers/{customer_id} */
export const handler = api(
  async (request) => ok({ customer: await getCustomer(request.caller, request.path.customer_id ?? "") }),
  { expand: expandAnswer("customer") },
);
