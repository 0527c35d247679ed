import { pageOfActivities } from "../../shared/activities/service.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /activities: the environment's activity log, newest first. */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "activity");
  return pageReply("activities", await pageOfActivities(request.caller, page), page);
});
