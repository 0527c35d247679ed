import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { advanceClock } from "../../shared/sandbox/clock.ts";

/** POST /sandbox/clock: moves a sandbox environment's clock forward and runs what fell due, within its time */
export const handler = api(async (request) => ok(await advanceClock(request.caller, request.body, request)));
