import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { parseBody, parseQuery } from "../../shared/http/input.ts";

function event(body: string, contentType?: string, base64 = false): APIGatewayProxyEventV2 {
  return {
    body: base64 ? Buffer.from(body).toString("base64") : body,
    isBase64Encoded: base64,
    headers: contentType ? { "content-type": contentType } : {},
  } as unknown as APIGatewayProxyEventV2;
}

describe("request bodies", () => {
  it("reads nested form fields in bracket and dot notation", () => {
    const body = parseBody(
      event(
        "name=Shoes&metadata[order]=42&device.channel=ios&details[0][name]=a&details[1][name]=b&expand[]=customer",
        "application/x-www-form-urlencoded",
      ),
    );
    expect(body).toEqual({
      name: "Shoes",
      metadata: { order: "42" },
      device: { channel: "ios" },
      details: [{ name: "a" }, { name: "b" }],
      expand: ["customer"],
    });
  });

  it("decodes base64 form bodies as API Gateway sends them", () => {
    expect(parseBody(event("first_name=J%C3%BCrgen", "application/x-www-form-urlencoded", true))).toEqual({
      first_name: "Jürgen",
    });
  });

  it("drops a JSON __proto__ key instead of letting it set the body's prototype", () => {
    const body = parseBody(event('{"__proto__": {"name": "inherited"}, "amount": "1"}', "application/json"));
    expect(body).toEqual({ amount: "1" });
    expect(body.name).toBeUndefined();
  });

  it("reads JSON bodies and treats null as absent, also when nested", () => {
    const body = parseBody(
      event(
        JSON.stringify({ name: "x", order_id: null, shipping: { zip: null, city: "Paris" } }),
        "application/json",
      ),
    );
    expect(body).toEqual({ name: "x", shipping: { city: "Paris" } });
  });

  it("answers a malformed JSON body with a 400 naming the problem", () => {
    expect(() => parseBody(event("{not json", "application/json"))).toThrowError(
      expect.objectContaining({ status: 400, errorType: "request.validation.malformed-body" }),
    );
  });

  it("refuses a JSON body that is not an object", () => {
    expect(() => parseBody(event("[1,2]", "application/json"))).toThrowError(
      expect.objectContaining({ status: 400 }),
    );
  });

  it("refuses content types it cannot read with a 415", () => {
    expect(() => parseBody(event("abc", "application/xml"))).toThrowError(
      expect.objectContaining({ status: 415 }),
    );
  });

  it("treats an empty body as no fields", () => {
    expect(parseBody(event("", "application/json"))).toEqual({});
  });
});

describe("query strings", () => {
  it("gives repeated keys and bracketed keys as arrays", () => {
    expect(parseQuery("expand=a&expand=b")).toEqual({ expand: ["a", "b"] });
    expect(parseQuery("expand[]=a&expand[]=b")).toEqual({ expand: ["a", "b"] });
  });

  it("keeps empty values so listing rules can read them as not given", () => {
    expect(parseQuery("filter=&limit=0&end_before=&start_after=")).toEqual({
      filter: "",
      limit: "0",
      end_before: "",
      start_after: "",
    });
  });
});
