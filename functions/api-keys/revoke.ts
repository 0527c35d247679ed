import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { revokeApiKey } from "../../shared/projects/api-keys.ts";

/** DELETE /api-keys/{api_key_id}: the key opens nothing from now on. */
export const handler = api(async (request) =>
  ok({ ...(await revokeApiKey(request.caller, request.path.api_key_id ?? "")) }),
);
