import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getPayout } from "../../shared/payouts/service.ts";

/** GET /payouts/{payout_id} */
export const handler = api(async (request) =>
  ok({ payout: await getPayout(request.caller, request.path.payout_id ?? "") }),
);
