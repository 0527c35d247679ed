import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { getAddon } from "../../../shared/subscriptions/addons.ts";

/** GET /subscriptions/{subscription_id}/addons/{addon_id} */
export const handler = api(async (request) =>
  ok({
    addon: await getAddon(request.caller, request.path.subscription_id ?? "", request.path.addon_id ?? ""),
  }),
);
