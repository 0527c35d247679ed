import { changeCustomer } from "../../shared/customers/service.ts";
import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** PUT /customers/{customer_id} */
export const handler = api(
  async (request) => {
    const customer = await changeCustomer(request.caller, request.path.customer_id ?? "", request.body);
    return ok({ customer });
  },
  { expand: expandAnswer("customer") },
);
