import { describe, expect, it } from "vitest";
import { contractOf } from "../../lib/contract/document.ts";
import { routes } from "../../lib/topology.ts";
import { PATH_PARAMETERS, type PathParameterName } from "../../shared/http/path-parameters.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { aWellFormed, fillPath, parametersOf } from "../support/paths.ts";

const local = useInProcessApi("Path parameters test");

/** What attackers sent: an id long enough to make a partition key DynamoDB refuses, and odd characters. */
const MALFORMED = ["A".repeat(2100), "cust_ é/..", "x"];

const cases = routes.flatMap((route) =>
  parametersOf(route.path).flatMap((name) =>
    MALFORMED.map((value) => ({ route, name: name as PathParameterName, value })),
  ),
);

describe("malformed path parameters", () => {
  it.each(cases.map((c) => [`${c.route.method} ${c.route.path}`, c.name, c.value.slice(0, 12), c] as const))(
    "%s answers a malformed {%s} (%s…) with the route's 404 for an unknown id",
    async (_route, _name, _shown, { route, name, value }) => {
      const values = Object.fromEntries(parametersOf(route.path).map((other) => [other, aWellFormed(other)]));
      const path = fillPath(route.path, { ...values, [name]: value });
      const client = local.sandbox;
      const answer =
        route.method === "GET"
          ? await client.get(path)
          : route.method === "DELETE"
            ? await client.del(path)
            : route.method === "PUT"
              ? await client.put(path, {})
              : await client.post(path, {});

      expect(answer.status).toBe(404);
      const spec = contractOf(route).answer;
      // A route that answers pages (the 3DS and checkout pages) answers its own 404 page; every
      // other route JSON.
      if (spec.kind === "document" && spec.contentType === "text/html") {
        expect(answer.headers.get("content-type")).toContain("text/html");
        expect(answer.text).toMatch(/<h1>[^<]* not found<\/h1>/);
      } else {
        expect(answer.body).toMatchObject({
          success: false,
          error_type: `resource.${PATH_PARAMETERS[name].resource}.not-found`,
        });
      }
    },
  );
});
