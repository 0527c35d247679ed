import { describe, expect, it } from "vitest";
import { cors, routeKey, routes } from "../../lib/topology.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { aWellFormed, fillPath, parametersOf } from "../support/paths.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

const local = useInProcessApi("CORS test");

const MERCHANT_PAGE = "https://shop.example.com";
/** What the web client library sends on every call: each makes the browser ask first. */
const LIBRARY_HEADERS = "authorization,content-type,api-version,x-processout-js-version,idempotency-key";

const pathOf = (template: string) =>
  fillPath(template, Object.fromEntries(parametersOf(template).map((name) => [name, aWellFormed(name)])));

const preflight = (target: string, method: string, requestHeaders = LIBRARY_HEADERS) =>
  sendRaw(local.url, {
    method: "OPTIONS",
    target,
    headers: {
      origin: MERCHANT_PAGE,
      "access-control-request-method": method,
      "access-control-request-headers": requestHeaders,
    },
  });

const listed = (value: unknown) =>
  String(value ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase());

describe("CORS in the local stack (as API Gateway's CORS configuration)", () => {
  it.each(routes.map((route) => [routeKey(route), route] as const))(
    "answers the preflight of %s with 204, any origin, its method and every header the library sends",
    async (_key, route) => {
      const answer = await preflight(pathOf(route.path), route.method);

      expect(answer.status).toBe(204);
      expect(answer.headers["access-control-allow-origin"]).toBe("*");
      expect(listed(answer.headers["access-control-allow-methods"])).toContain(route.method.toLowerCase());
      expect(listed(answer.headers["access-control-allow-headers"])).toEqual(
        expect.arrayContaining([...LIBRARY_HEADERS.split(","), "x-processout-client-secret"]),
      );
      expect(answer.headers["access-control-max-age"]).toBe(String(cors.maxAgeSeconds));
      expect(answer.headers["access-control-allow-credentials"]).toBeUndefined();
      expect(answer.text).toBe("");
    },
  );

  it("names Authorization in the allowed headers, never a wildcard (a * does not cover it)", async () => {
    const answer = await preflight("/cards", "POST", "authorization");

    expect(listed(answer.headers["access-control-allow-headers"])).toContain("authorization");
    expect(listed(answer.headers["access-control-allow-headers"])).not.toContain("*");
  });

  it("puts the allowed origin and the exposed headers on a real answer to a page", async () => {
    const answer = await sendRaw(local.url, {
      method: "POST",
      target: "/cards",
      headers: {
        origin: MERCHANT_PAGE,
        authorization: basicAuthorization(local.project.sandbox.project_id, ""),
        "content-type": "application/json",
      },
      body: JSON.stringify({ number: "4242424242424242", exp_month: "12", exp_year: "2099", cvc2: "123" }),
    });

    expect(answer.status).toBe(200);
    expect(answer.headers["access-control-allow-origin"]).toBe("*");
    expect(listed(answer.headers["access-control-expose-headers"])).toEqual([
      "x-request-id",
      "idempotent-replayed",
    ]);
    expect(answer.headers["access-control-allow-credentials"]).toBeUndefined();
  });

  it("puts it on refusals too, so that a page can read the error", async () => {
    const answer = await sendRaw(local.url, {
      method: "GET",
      target: "/customers",
      headers: { origin: MERCHANT_PAGE },
    });

    expect(answer.status).toBe(401);
    expect(answer.headers["access-control-allow-origin"]).toBe("*");
    expect(JSON.parse(answer.text)).toMatchObject({
      success: false,
      error_type: "request.authentication.invalid",
    });
  });

  it("adds nothing to a request that does not come from a page (no Origin)", async () => {
    const answer = await local.sandbox.get("/customers");

    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("treats an OPTIONS request that is not a preflight as any request no route matches", async () => {
    const answer = await sendRaw(local.url, {
      method: "OPTIONS",
      target: "/cards",
      headers: { origin: MERCHANT_PAGE },
    });

    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({ success: false, error_type: "request.route.not-found" });
  });
});
