import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { readClock } from "../../shared/sandbox/clock.ts";

/** GET /sandbox/clock */
export const handler = api(async (request) => ok({ clock: readClock(request.caller) }));
