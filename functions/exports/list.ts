import { pageOfExports } from "../../shared/exports/service.ts";
import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /exports */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "export");
  return pageReply("exports", await pageOfExports(request.caller, page), page);
});
