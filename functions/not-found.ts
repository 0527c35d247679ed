import { api } from "../shared/http/api.ts";
import { routeNotFound } from "../shared/http/errors.ts";

/** API Gateway's `$default` route: any request no route matches gets a JSON 404. */
export const handler = api(
  async (request) => {
    throw routeNotFound(request.method, request.rawPath);
  },
  { auth: "none" },
);
