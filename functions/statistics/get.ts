import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { statisticsOf } from "../../shared/statistics/service.ts";

/** GET /statistics: authorization attempts and approved amounts over time, per gateway configuration. */
export const handler = api(async (request) =>
  ok({ statistics: await statisticsOf(request.caller, request.query) }),
);
