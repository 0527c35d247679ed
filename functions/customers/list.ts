import { CUSTOMER_EXPANSIONS, pageOfCustomers } from "../../shared/customers/service.ts";
import { api } from "../../shared/http/api.ts";
import { readExpand } from "../../shared/http/expand.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /customers */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "customer");
  const expand = readExpand(request, CUSTOMER_EXPANSIONS);
  return pageReply("customers", await pageOfCustomers(request.caller, page, expand), page);
});
