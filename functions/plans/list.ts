import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { PLAN_CURSOR, pageOfPlans } from "../../shared/plans/service.ts";

/** GET /plans */
export const handler = api(async (request) => {
  const page = readPageRequest(request, PLAN_CURSOR);
  return pageReply("plans", await pageOfPlans(request.caller, page), page);
});
