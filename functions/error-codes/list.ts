import { presentErrorCodes } from "../../shared/gateways/declines.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /error-codes: the one catalogue of decline codes, by category, each soft or hard. */
export const handler = api(async () => ok(presentErrorCodes()));
