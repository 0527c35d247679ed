import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createApiKey } from "../../shared/projects/api-keys.ts";

/** POST /api-keys: a new private key, in this answer only (a replay of its Idempotency-Key shows none). */
export const handler = api(
  async (request) =>
    ok({
      ...(await createApiKey(request.caller, request.body, (stored) =>
        request.commitWith(ok({ ...stored })),
      )),
    }),
  { idempotency: "in-the-write" },
);
