import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { INPUT_LIMITS, parseBody, parseQuery } from "../../shared/http/input.ts";

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

  it("drops the keys every object has (constructor, toString, …) from JSON as qs drops them from forms", () => {
    const json = parseBody(
      event(
        '{"metadata": {"constructor": "x", "toString": "y", "ok": "1"}, "hasOwnProperty": "z"}',
        "application/json",
      ),
    );
    const form = parseBody(
      event(
        "metadata[constructor]=x&metadata[toString]=y&metadata[ok]=1&hasOwnProperty=z",
        "application/x-www-form-urlencoded",
      ),
    );
    expect(json).toEqual({ metadata: { ok: "1" } });
    expect(form).toEqual(json);
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

  it("keeps every JSON number as the text it was sent as, like a form value", () => {
    const body = parseBody(
      event(
        '{"amount": 1.10, "big": 1e2, "tiny": 1e-400, "huge": 12345678901234567890123, "zero": -0,' +
          ' "list": [2.50, {"n": 10}], "flag": true, "text": "1.10"}',
        "application/json",
      ),
    );
    expect(body).toEqual({
      amount: "1.10",
      big: "1e2",
      tiny: "1e-400",
      huge: "12345678901234567890123",
      zero: "-0",
      list: ["2.50", { n: "10" }],
      flag: true,
      text: "1.10",
    });
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

  it("leaves out what libraries mark as not given: an empty value, a bare key, the literal null", () => {
    expect(parseQuery("filter=&limit=0&end_before=&start_after=")).toEqual({ limit: "0" });
    expect(parseQuery("expand_merchant_accounts&with_disabled=null&order=asc")).toEqual({ order: "asc" });
    expect(parseQuery("expand[]=null&expand[]=&expand[]=customer")).toEqual({ expand: ["customer"] });
    expect(parseQuery("cancel_at_end=True&reason=None")).toEqual({ cancel_at_end: "True", reason: "None" });
  });
});

/** `levels` objects nested in one another: `{"a":{"a":{}}}` has 3 levels. */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
/** A form field `levels` deep: `a[a][a]=1` makes 3 levels of objects (the body and two below). */
const nestedForm = (levels: number) => `a${"[a]".repeat(levels - 1)}=1`;

const refusal = (status: number, errorType: string, message: RegExp) =>
  expect.objectContaining({ status, errorType, message: expect.stringMatching(message) });

describe("bounded input", () => {
  it("refuses JSON nested 4,000 levels deep with a 400 saying the limit, instead of overflowing the stack", () => {
    expect(() => parseBody(event(nestedJson(4000), "application/json"))).toThrowError(
      refusal(400, "request.validation.nesting-too-deep", /more than 10 levels deep/),
    );
  });

  it("accepts JSON nested exactly as deep as the limit, and refuses one level more", () => {
    expect(parseBody(event(nestedJson(INPUT_LIMITS.depth), "application/json"))).toMatchObject({ a: {} });
    expect(() => parseBody(event(nestedJson(INPUT_LIMITS.depth + 1), "application/json"))).toThrowError(
      refusal(400, "request.validation.nesting-too-deep", /request body/),
    );
  });

  it("counts lists as levels, and brackets inside strings as text", () => {
    const lists = `{"a":${"[".repeat(INPUT_LIMITS.depth)}${"]".repeat(INPUT_LIMITS.depth)}}`;
    expect(() => parseBody(event(lists, "application/json"))).toThrowError(
      refusal(400, "request.validation.nesting-too-deep", /levels/),
    );
    const quoted = JSON.stringify({ name: "[{".repeat(5000), escaped: '\\"[' });
    expect(parseBody(event(quoted, "application/json")).name).toBe("[{".repeat(5000));
  });

  it("holds form bodies to the same depth, in bracket and dot notation alike", () => {
    expect(
      parseBody(event(nestedForm(INPUT_LIMITS.depth), "application/x-www-form-urlencoded")),
    ).toHaveProperty(`a${".a".repeat(INPUT_LIMITS.depth - 1)}`, "1");
    for (const body of [nestedForm(INPUT_LIMITS.depth + 1), nestedForm(4000), `a${".a".repeat(4000)}=1`]) {
      expect(() => parseBody(event(body, "application/x-www-form-urlencoded"))).toThrowError(
        refusal(400, "request.validation.nesting-too-deep", /request body nests .* more than 10 levels/),
      );
    }
  });

  it("refuses more fields than the limit, counting object members and list items at every level", () => {
    const members = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    expect(
      Object.keys(parseBody(event(JSON.stringify(members(INPUT_LIMITS.fields)), "application/json"))),
    ).toHaveLength(INPUT_LIMITS.fields);
    const tooMany = [
      JSON.stringify(members(INPUT_LIMITS.fields + 1)),
      JSON.stringify({ list: Array.from({ length: INPUT_LIMITS.fields }, () => 1) }),
      JSON.stringify({ a: members(INPUT_LIMITS.fields / 2), b: [members(INPUT_LIMITS.fields / 2)] }),
    ];
    for (const body of tooMany) {
      expect(() => parseBody(event(body, "application/json"))).toThrowError(
        refusal(400, "request.validation.too-many-fields", /more than 10000 fields/),
      );
    }
  });

  it("holds form bodies to the same field count", () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join("&");
    expect(
      Object.keys(parseBody(event(fields(INPUT_LIMITS.fields), "application/x-www-form-urlencoded"))),
    ).toHaveLength(INPUT_LIMITS.fields);
    for (const body of [
      fields(INPUT_LIMITS.fields + 1),
      `${fields(INPUT_LIMITS.fields / 2)}&a[b][c]=1&${"x[]=1&".repeat(5000)}`,
    ]) {
      expect(() => parseBody(event(body, "application/x-www-form-urlencoded"))).toThrowError(
        refusal(400, "request.validation.too-many-fields", /request body has more than/),
      );
    }
  });

  it("holds query strings to the same limits", () => {
    expect(() => parseQuery(nestedForm(4000))).toThrowError(
      refusal(400, "request.validation.nesting-too-deep", /query string/),
    );
    expect(() => parseQuery("x=1&".repeat(INPUT_LIMITS.fields + 1))).toThrowError(
      refusal(400, "request.validation.too-many-fields", /query string/),
    );
  });

  it("refuses a body larger than the limit with a 413, base64 or not", () => {
    const large = `name=${"x".repeat(INPUT_LIMITS.bodyBytes)}`;
    for (const base64 of [false, true]) {
      expect(() => parseBody(event(large, "application/x-www-form-urlencoded", base64))).toThrowError(
        refusal(413, "request.body.too-large", /larger than 1048576 bytes/),
      );
    }
  });

  it("refuses a base64 body that is not UTF-8 instead of replacing its bytes", () => {
    const latin1 = {
      body: Buffer.from("name=J\xfcrgen", "latin1").toString("base64"),
      isBase64Encoded: true,
    };
    expect(() =>
      parseBody({ ...latin1, headers: { "content-type": "application/x-www-form-urlencoded" } } as never),
    ).toThrowError(refusal(400, "request.validation.malformed-body", /not valid UTF-8/));
  });

  it("keeps nulls out of objects inside lists of lists, and __proto__ at any depth", () => {
    const body = parseBody(
      event('{"a": [[{"x": null, "y": 1, "__proto__": {"z": 2}}], null]}', "application/json"),
    );
    expect(body).toEqual({ a: [[{ y: "1" }], null] });
  });
});
