import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { listApiKeys } from "../../shared/projects/api-keys.ts";

/** GET /api-keys: the environment's keys, newest first (never a key itself). */
export const handler = api(async (request) => ok({ api_keys: await listApiKeys(request.caller) }));
