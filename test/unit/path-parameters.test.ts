import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { routes } from "../../lib/topology.ts";
import {
  malformedPathParameter,
  PATH_PARAMETERS,
  type PathParameterName,
} from "../../shared/http/path-parameters.ts";
import { newId } from "../../shared/ids.ts";
import { parametersOf } from "../support/paths.ts";

describe("path parameter shapes", () => {
  it("declares a shape for every {parameter} of every route in lib/topology.ts", () => {
    const undeclared = routes.flatMap((route) =>
      parametersOf(route.path)
        .filter((name) => !Object.hasOwn(PATH_PARAMETERS, name))
        .map((name) => `${route.method} ${route.path}: {${name}}`),
    );
    expect(undeclared).toEqual([]);
  });

  it.each([
    ["customer_id", newId("customer")],
    ["invoice_id", newId("invoice")],
    ["token_id", newId("token")],
    ["card_id", newId("card")],
    ["transaction_id", newId("transaction")],
    ["refund_id", newId("refund")],
    ["event_id", newId("event")],
    ["subscription_id", newId("subscription")],
    ["project_id", newId("project")],
    ["project_id", `test-${newId("project")}`],
    ["token", randomBytes(24).toString("base64url")],
    ["plan_id", "gold-plan_2024.v2"],
    ["gateway_configuration_id", newId("gatewayConfiguration")],
    ["gateway_configuration_id", `${newId("gatewayConfiguration")}.sandbox`],
    ["gateway_name", "sandbox"],
    ["iin", "424242"],
    ["iin", "42424242"],
    ["docs_file", "swagger-ui-bundle.js"],
    ["docs_file", "favicon-32x32.png"],
  ] as const)("accepts a well-formed %s (%s)", (name, value) => {
    expect(malformedPathParameter({ [name]: value })).toBeUndefined();
  });

  it.each([
    ["customer_id", newId("invoice")],
    ["customer_id", `${newId("customer")}x`],
    ["customer_id", newId("customer").toLowerCase()],
    ["project_id", `live-${newId("project")}`],
    ["token", "A".repeat(2100)],
    ["token", "A".repeat(31)],
    ["token", `${"A".repeat(31)}=`],
    ["plan_id", ""],
    ["plan_id", "p".repeat(101)],
    ["plan_id", "gold plan"],
    ["plan_id", "gold/../plan"],
    ["gateway_configuration_id", `${newId("gatewayConfiguration")}.Sandbox`],
    ["gateway_configuration_id", `${newId("gatewayConfiguration")}.`],
    ["gateway_name", "g".repeat(41)],
    ["iin", "42424"],
    ["iin", "424242424"],
    ["iin", "４２４２４２"],
    ["docs_file", "../package.json"],
    ["docs_file", ".env"],
    ["docs_file", "swagger-ui"],
  ] as const)("refuses a malformed %s (%s)", (name, value) => {
    expect(malformedPathParameter({ [name]: value })).toEqual({
      name,
      resource: PATH_PARAMETERS[name as PathParameterName].resource,
    });
  });

  it("names the resource of the first malformed parameter", () => {
    expect(malformedPathParameter({ customer_id: newId("customer"), token_id: "tok_1" })).toEqual({
      name: "token_id",
      resource: "token",
    });
  });

  it("never lets through a parameter without a declared shape", () => {
    expect(() => malformedPathParameter({ thing_id: "x" })).toThrowError(/\{thing_id\} has no shape/);
  });
});
