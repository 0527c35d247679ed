import { api } from "../../../shared/http/api.ts";
import { ok } from "../../../shared/http/reply.ts";
import { removeToken } from "../../../shared/tokens/service.ts";

/** DELETE /customers/{customer_id}/tokens/{token_id} */
export const handler = api(async (request) => {
  await removeToken(request.caller, request.path.customer_id ?? "", request.path.token_id ?? "");
  return ok({});
});
