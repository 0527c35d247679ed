import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../lib/contract/document.ts";
import { contract } from "../../lib/contract/routes.ts";
import { routeKey, routes } from "../../lib/topology.ts";
import { expandablePaths } from "../../shared/expansion/fields.ts";

type Json = Record<string, unknown>;
const document = openApiDocument("https://api.example.com");
const operationOf = (method: string, path: string) =>
  ((document.paths as Json)[path] as Json | undefined)?.[method.toLowerCase()] as Json | undefined;

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document (@apidevtools/swagger-parser)", async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    expect(document.openapi).toMatch(/^3\.1\./);
  });

  it("is refused by the same validator when it is broken, so the test above can fail", async () => {
    const broken = structuredClone(document);
    ((broken.paths as Json)["/customers"] as Json).get = { responses: "none" };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it("describes every route of lib/topology.ts, and nothing else", () => {
    const missing = routes.filter((route) => !operationOf(route.method, route.path)).map(routeKey);
    expect(missing).toEqual([]);
    const described = Object.entries(document.paths as Json).flatMap(([path, operations]) =>
      Object.keys(operations as Json).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(described.sort()).toEqual(routes.map(routeKey).sort());
    expect(Object.keys(contract).sort()).toEqual(routes.map(routeKey).sort());
  });

  it("names each path parameter with the shape the HTTP core checks", () => {
    const parameters = operationOf("GET", "/customers/{customer_id}/tokens/{token_id}")?.parameters as Json[];
    expect(
      parameters.filter((parameter) => parameter.in === "path").map((parameter) => parameter.name),
    ).toEqual(["customer_id", "token_id"]);
    expect(parameters[0]).toMatchObject({
      required: true,
      schema: { pattern: expect.stringContaining("cust_") },
    });
  });

  it("takes each request body in JSON and form encoding, from the route's own zod schema", () => {
    const body = operationOf("POST", "/invoices")?.requestBody as Json;
    const content = body.content as Json;
    expect(Object.keys(content)).toEqual(["application/json", "application/x-www-form-urlencoded"]);
    const schema = (document.components as { schemas: Json }).schemas.InvoicesCreateRequest as Json;
    expect(schema).toMatchObject({
      type: "object",
      properties: { name: { type: "string", maxLength: 80 }, amount: { type: "string" } },
    });
    expect((content["application/json"] as Json).example).toMatchObject({ name: "Order 42" });
  });

  it("offers expand with every path the route's resource can expand, and the listing parameters on lists", () => {
    const parameters = operationOf("GET", "/customers")?.parameters as Json[];
    const names = parameters.map((parameter) => parameter.name);
    expect(names).toEqual(["limit", "order", "start_after", "end_before", "expand"]);
    const expand = parameters.find((parameter) => parameter.name === "expand") as Json;
    expect((expand.schema as { items: { enum: string[] } }).items.enum).toEqual(expandablePaths("customer"));
    const authorize = operationOf("POST", "/invoices/{invoice_id}/authorize")?.parameters as Json[];
    expect(authorize.map((parameter) => parameter.name)).toContain("expand");
  });

  it("says which credentials each route takes", () => {
    expect(document.security).toEqual([{ privateKey: [] }]);
    expect(operationOf("POST", "/cards")?.security).toEqual([{ publicKey: [] }, { privateKey: [] }]);
    for (const path of ["/openapi.json", "/docs", "/3ds/{token}"])
      expect(operationOf("GET", path)?.security).toEqual([]);
    expect(operationOf("GET", "/customers")).not.toHaveProperty("security");
  });

  it("answers errors in the one error shape, and successes in the route's own answer schema", () => {
    const responses = operationOf("POST", "/customers")?.responses as Record<string, Json>;
    for (const status of ["400", "401", "404", "default"]) {
      expect(responses[status]?.content).toEqual({
        "application/json": { schema: { $ref: "#/components/schemas/Error" } },
      });
    }
    expect(responses["200"]?.content).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/CustomersCreateAnswer" } },
    });
  });
});
