import { pageOfCustomers } from "../../shared/customers/service.ts";
import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /customers */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "customer");
    return pageReply("customers", await pageOfCustomers(request.caller, page), page);
  },
  { expand: expandAnswer("customer", "customers") },
);
