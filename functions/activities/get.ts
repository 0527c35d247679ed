import { getActivity } from "../../shared/activities/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /activities/{activity_id} */
export const handler = api(async (request) =>
  ok({ activity: await getActivity(request.caller, request.path.activity_id ?? "") }),
);
