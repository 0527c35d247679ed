import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { deleteAddon } from "../../../shared/subscriptions/addons.ts";

/** DELETE /subscriptions/{subscription_id}/addons/{addon_id} (`prorate`, `proration_date`, `preview` in the query) */
export const handler = api(async (request) =>
  ok(
    await deleteAddon(
      request.caller,
      request.path.subscription_id ?? "",
      request.path.addon_id ?? "",
      request,
    ),
  ),
);
