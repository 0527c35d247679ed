import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { rollApiKey } from "../../shared/projects/api-keys.ts";

/** POST /api-keys/{api_key_id}/roll: a new key replaces this one, which works until the overlap ends. */
export const handler = api(
  async (request) =>
    ok({
      ...(await rollApiKey(request.caller, request.path.api_key_id ?? "", request.body, (stored) =>
        request.commitWith(ok({ ...stored })),
      )),
    }),
  { idempotency: "in-the-write" },
);
