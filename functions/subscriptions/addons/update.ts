import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { updateAddon } from "../../../shared/subscriptions/addons.ts";

/** PUT /subscriptions/{subscription_id}/addons/{addon_id} */
export const handler = api(async (request) =>
  ok(
    await updateAddon(
      request.caller,
      request.path.subscription_id ?? "",
      request.path.addon_id ?? "",
      request,
    ),
  ),
);
