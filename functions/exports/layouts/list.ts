import { EXPORT_LAYOUT_CURSOR, pageOfLayouts } from "../../../shared/exports/layouts.ts";
import { api } from "../../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../../shared/http/listing.ts";

/** GET /exports/layouts */
export const handler = api(async (request) => {
  const page = readPageRequest(request, EXPORT_LAYOUT_CURSOR);
  return pageReply("export_layouts", await pageOfLayouts(request.caller, page), page);
});
