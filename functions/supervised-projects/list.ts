import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { ENVIRONMENT_PROJECT_ID_PATTERN } from "../../shared/ids.ts";
import { pageOfSupervisedProjects } from "../../shared/projects/supervision.ts";

/** GET /supervised-projects: the projects this environment created. */
export const handler = api(async (request) => {
  const page = readPageRequest(request, {
    pattern: ENVIRONMENT_PROJECT_ID_PATTERN,
    description: "a project id",
  });
  return pageReply("projects", await pageOfSupervisedProjects(request.caller, page), page);
});
