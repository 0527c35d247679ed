import { describe, expect, it } from "vitest";
import { readExpand } from "../../shared/http/expand.ts";
import { readPageRequest } from "../../shared/http/listing.ts";
import { newId } from "../../shared/ids.ts";

const page = (query: Record<string, unknown>, body: Record<string, unknown> = {}) =>
  readPageRequest({ query, body }, "customer");

describe("listing parameters", () => {
  it("defaults to 10 items in descending order", () => {
    expect(page({})).toEqual({ limit: 10, order: "desc", startAfter: undefined, endBefore: undefined });
  });

  it("reads limit=0 and empty cursors as not given, as one client library sends them", () => {
    expect(page({ filter: "", limit: "0", end_before: "", start_after: "" })).toMatchObject({ limit: 10 });
    // A JSON body's `"limit": 0, "expand": null` as the HTTP core hands it over: null absent, 0 as text.
    expect(page({ limit: "5" }, { limit: "0" })).toMatchObject({ limit: 5 });
  });

  it("accepts up to 100 and refuses more, naming limit", () => {
    expect(page({ limit: "100" }).limit).toBe(100);
    expect(() => page({ limit: "101" })).toThrowError(
      expect.objectContaining({ status: 400, invalidFields: [expect.objectContaining({ name: "limit" })] }),
    );
    expect(() => page({ limit: "-1" })).toThrowError(expect.objectContaining({ status: 400 }));
    expect(() => page({ limit: "ten" })).toThrowError(expect.objectContaining({ status: 400 }));
  });

  it("refuses an order other than asc or desc", () => {
    expect(() => page({ order: "up" })).toThrowError(
      expect.objectContaining({ invalidFields: [expect.objectContaining({ name: "order" })] }),
    );
  });

  it("refuses start_after combined with end_before, naming both", () => {
    const a = newId("customer");
    const b = newId("customer");
    expect(() => page({ start_after: a, end_before: b })).toThrowError(
      expect.objectContaining({
        status: 400,
        invalidFields: [
          expect.objectContaining({ name: "start_after" }),
          expect.objectContaining({ name: "end_before" }),
        ],
      }),
    );
  });

  it("refuses a cursor that is not an id of the listed resource", () => {
    expect(() => page({ start_after: "iv_123" })).toThrowError(
      expect.objectContaining({ invalidFields: [expect.objectContaining({ name: "start_after" })] }),
    );
  });
});

describe("expand", () => {
  const allowed = ["customer", "customer.tokens", "project"];
  const expand = (query: Record<string, unknown>, body: Record<string, unknown> = {}) =>
    [...readExpand({ query, body }, allowed)].sort();

  it("reads the four shapes clients send", () => {
    expect(expand({ expand: ["customer", "project"] })).toEqual(["customer", "project"]);
    expect(expand({ expand: "customer,project" })).toEqual(["customer", "project"]);
    expect(expand({ expand: "customer" })).toEqual(["customer"]);
    expect(expand({}, { expand: ["customer.tokens", "project"] })).toEqual(["customer.tokens", "project"]);
  });

  it("refuses a field that cannot be expanded, naming expand", () => {
    expect(() => expand({ expand: "secrets" })).toThrowError(
      expect.objectContaining({ status: 400, invalidFields: [expect.objectContaining({ name: "expand" })] }),
    );
  });
});
