import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createSupervisedProject } from "../../shared/projects/supervision.ts";

/** POST /supervised-projects: a sub-merchant's project, with its keys (shown once). */
export const handler = api(async (request) =>
  ok({ project: await createSupervisedProject(request.caller, request.body) }),
);
