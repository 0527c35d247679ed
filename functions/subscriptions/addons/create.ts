import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { createAddon } from "../../../shared/subscriptions/addons.ts";

/** POST /subscriptions/{subscription_id}/addons (`preview=true`: what it would bill, nothing changed) */
export const handler = api(async (request) =>
  ok(await createAddon(request.caller, request.path.subscription_id ?? "", request)),
);
