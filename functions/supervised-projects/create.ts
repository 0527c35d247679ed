import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createSupervisedProject } from "../../shared/projects/supervision.ts";

/**
 * POST /supervised-projects: a sub-merchant's project, with its keys (shown once: a replay of its
 * Idempotency-Key answers them as null, as the stored answer never holds them).
 */
export const handler = api(
  async (request) =>
    ok({
      project: await createSupervisedProject(request.caller, request.body, (stored) =>
        request.commitWith(ok({ project: stored })),
      ),
    }),
  { idempotency: "in-the-write" },
);
