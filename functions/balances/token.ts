import { tokenBalance } from "../../shared/balances/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /balances/tokens/{token_id}: a stored-value card's vouchers and available balance. */
export const handler = api(async (request) =>
  ok({ balances: await tokenBalance(request.caller, request.path.token_id ?? "") }),
);
