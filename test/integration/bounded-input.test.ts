import { beforeAll, describe, expect, it } from "vitest";
import { type RouteDeclaration, routeKey, routes } from "../../lib/topology.ts";
import { actionOf } from "../../shared/dashboard/roles.ts";
import { INPUT_LIMITS } from "../../shared/http/input.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { type Browser, projectWithOwner } from "../support/dashboard.ts";
import { aWellFormed, fillPath, parametersOf } from "../support/paths.ts";
import { basicAuthorization, type RawResponse, sendRaw } from "../support/raw-http.ts";

const local = useInProcessApi("Bounded input test");

/** The dashboard's routes that take a person's session (not a key): its caller is a signed-in owner. */
const takesSession = (route: RouteDeclaration) =>
  route.path.startsWith("/dashboard/") && actionOf(routeKey(route)) !== "public";
let owner: Browser;
beforeAll(async () => {
  ({ owner } = await projectWithOwner(local.url, "Bounded input test"));
});

/** What broke every route: JSON objects nested 4,000 levels deep, about 24 KB. */
const DEEP_JSON = `${'{"a":'.repeat(3999)}{}${"}".repeat(3999)}`;
const DEEP_FORM = `a${"[a]".repeat(3999)}=1`;

const routeCases = routes.map((route) => {
  const values = Object.fromEntries(parametersOf(route.path).map((name) => [name, aWellFormed(name)]));
  return [`${route.method} ${route.path}`, { route, path: fillPath(route.path, values) }] as const;
});

function send(
  method: string,
  target: string,
  options: { body?: string; contentType?: string; credentials?: boolean | "session" } = {},
): Promise<RawResponse> {
  const { project_id, private_key } = local.project.sandbox;
  const session = { cookie: `__Host-session=${owner.cookie}`, "x-csrf-token": owner.csrf ?? "" };
  return sendRaw(local.url, {
    method,
    target,
    headers: {
      ...(options.credentials === true ? { authorization: basicAuthorization(project_id, private_key) } : {}),
      ...(options.credentials === "session" ? session : {}),
      ...(options.body !== undefined ? { "content-type": options.contentType ?? "application/json" } : {}),
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
}

function expectError(answer: RawResponse, status: number, errorType: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toContain("application/json");
  expect(JSON.parse(answer.text)).toMatchObject({
    success: false,
    error_type: errorType,
    message: expect.any(String),
  });
}

describe("bounded input, before any work", () => {
  it.each(routeCases)("%s answers a 4,000-level JSON body without credentials with a 401", async (_, c) => {
    const answer = await send(c.route.method, c.path, { body: DEEP_JSON });
    if (takesSession(c.route)) expectError(answer, 401, "request.dashboard.signed-out");
    else if (c.route.unauthenticated) expectError(answer, 400, "request.validation.nesting-too-deep");
    else expectError(answer, 401, "request.authentication.invalid");
  });

  it.each(routeCases)(
    "%s answers it from an authenticated caller with a 400 that says the limit",
    async (_, c) => {
      const credentials = takesSession(c.route) ? "session" : true;
      const answer = await send(c.route.method, c.path, { body: DEEP_JSON, credentials });
      expectError(answer, 400, "request.validation.nesting-too-deep");
      expect(JSON.parse(answer.text).message).toContain(`more than ${INPUT_LIMITS.depth} levels deep`);
    },
  );

  it("authenticates before parsing: a malformed body from an unknown caller is a 401, not a 400", async () => {
    expectError(
      await send("POST", "/customers", { body: "{not json" }),
      401,
      "request.authentication.invalid",
    );
    expectError(await send("GET", `/customers?${DEEP_FORM}`), 401, "request.authentication.invalid");
  });

  it("holds form bodies and query strings to the same depth", async () => {
    expectError(
      await send("POST", "/customers", {
        body: DEEP_FORM,
        contentType: "application/x-www-form-urlencoded",
        credentials: true,
      }),
      400,
      "request.validation.nesting-too-deep",
    );
    expectError(
      await send("GET", `/customers?expand${"[a]".repeat(20)}=x`, { credentials: true }),
      400,
      "request.validation.nesting-too-deep",
    );
  });

  it("refuses more fields than the limit", async () => {
    const many = JSON.stringify({
      metadata: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [i, "v"])),
    });
    expectError(
      await send("POST", "/customers", { body: many, credentials: true }),
      400,
      "request.validation.too-many-fields",
    );
  });

  it("still reads ordinary bodies in both encodings", async () => {
    const json = await send("POST", "/customers", {
      body: JSON.stringify({ first_name: "Ada", metadata: { plan: "gold" }, email: null }),
      credentials: true,
    });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.text).customer).toMatchObject({ first_name: "Ada", metadata: { plan: "gold" } });
    const form = await send("POST", "/customers", {
      body: "first_name=Grace&metadata.plan=gold",
      contentType: "application/x-www-form-urlencoded",
      credentials: true,
    });
    expect(JSON.parse(form.text).customer).toMatchObject({ first_name: "Grace", metadata: { plan: "gold" } });
  });
});
