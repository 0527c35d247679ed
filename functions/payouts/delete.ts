import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { deletePayout } from "../../shared/payouts/service.ts";

/** DELETE /payouts/{payout_id}: the payout and its items */
export const handler = api(async (request) => {
  await deletePayout(request.caller, request.path.payout_id ?? "");
  return ok({});
});
