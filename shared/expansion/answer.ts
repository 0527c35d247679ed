import type { AnswerExpansion } from "../http/api.ts";
import { validationFailed } from "../http/errors.ts";
import { readExpand } from "../http/expand.ts";
import { expandResources, type Presented } from "./expander.ts";
import { expandablePaths, expandTree, type ResourceType } from "./fields.ts";

/**
 * What a route gives the HTTP core to expand its answers (`api(handle, { expand })`): the resource
 * of `type` it presents under `key` of its answer, alone (`{customer: {...}}`) or a page of them
 * (`{customers: [...]}`). An answer without it (`transaction: null` before any payment) is left as is.
 *
 * Expanding shows other resources of the environment, which only the private key may read: a
 * request with the public key (the project id alone, from browsers and apps) that asks for it is
 * refused.
 */
export function expandAnswer(type: ResourceType, key: string = type): AnswerExpansion {
  const allowed = expandablePaths(type);
  return {
    prepare(request) {
      const paths = readExpand(request, allowed);
      if (paths.size === 0) return undefined;
      if (request.caller.credential !== "private-key" && request.caller.credential !== "dashboard") {
        throw validationFailed("invalid-expand", [
          { name: "expand", message: "needs the private key: expanding shows other resources" },
        ]);
      }
      const tree = expandTree(paths);
      return async (body) => {
        const value = body[key];
        if (Array.isArray(value)) {
          return { ...body, [key]: await expandResources(request.caller, type, value as Presented[], tree) };
        }
        if (typeof value !== "object" || value === null) return body;
        const [expanded] = await expandResources(request.caller, type, [value as Presented], tree);
        return { ...body, [key]: expanded };
      };
    },
  };
}
