import { describe, expect, it } from "vitest";
import {
  countryCode,
  currency,
  metadata,
  parseTimestamp,
  phoneNumber,
  timestamp,
} from "../../shared/validation/fields.ts";
import { fieldPath, parseInput } from "../../shared/validation/parse.ts";
import * as z from "../../shared/validation/zod.ts";

describe("field rules", () => {
  it("accepts ISO 4217 currencies with a minor unit and stores them upper-case", () => {
    expect(currency.parse("usd")).toBe("USD");
    expect(currency.parse("JPY")).toBe("JPY");
    expect(currency.safeParse("XAU").success).toBe(false);
    expect(currency.safeParse("ABC").success).toBe(false);
    expect(currency.safeParse("US").success).toBe(false);
  });

  it("accepts ISO 3166 alpha-2 country codes only", () => {
    expect(countryCode.parse("fr")).toBe("FR");
    expect(countryCode.safeParse("XX").success).toBe(false);
    expect(countryCode.safeParse("FRA").success).toBe(false);
  });

  it("stores a leading + of a phone number as 00 and limits it to 17 characters", () => {
    expect(phoneNumber.parse("+33123456789")).toBe("0033123456789");
    expect(phoneNumber.parse("+123456789012345")).toBe("00123456789012345");
    expect(phoneNumber.safeParse("+1234567890123456").success).toBe(false);
    expect(phoneNumber.safeParse("call me").success).toBe(false);
  });

  it("takes dates in ISO 8601 or RFC 1123 and returns ISO 8601 UTC with milliseconds", () => {
    expect(timestamp.parse("Sun, 22 Nov 2026 06:42:31 GMT")).toBe("2026-11-22T06:42:31.000Z");
    expect(timestamp.parse("2026-11-22T08:42:31+02:00")).toBe("2026-11-22T06:42:31.000Z");
    expect(parseTimestamp("tomorrow")).toBeUndefined();
    expect(parseTimestamp("2026-13-45")).toBeUndefined();
    expect(parseTimestamp("2026-02-30")).toBeUndefined();
    expect(parseTimestamp("Mon, 31 Apr 2026 10:00:00 GMT")).toBeUndefined();
    expect(parseTimestamp("2028-02-29T00:00:00Z")?.toISOString()).toBe("2028-02-29T00:00:00.000Z");
  });

  it("limits metadata to 50 pairs, keys of 40 and values of 500 characters", () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    expect(metadata.safeParse(fifty).success).toBe(true);
    expect(metadata.safeParse({ ...fifty, k50: "v" }).success).toBe(false);
    expect(metadata.safeParse({ ["k".repeat(40)]: "v".repeat(500) }).success).toBe(true);
    expect(metadata.safeParse({ ["k".repeat(41)]: "v" }).success).toBe(false);
    expect(metadata.safeParse({ k: "v".repeat(501) }).success).toBe(false);
    expect(metadata.safeParse({ k: 1 }).success).toBe(false);
  });
});

describe("validation errors", () => {
  const schema = z.object({
    name: z.string().check(z.maxLength(3)),
    shipping: z.optional(z.object({ zip: z.string().check(z.maxLength(2)) })),
    details: z.optional(z.array(z.object({ name: z.string() }))),
    metadata,
  });

  it("names nested fields the way merchants write them", () => {
    expect(fieldPath(["details", 2, "name"])).toBe("details[2].name");
    expect(fieldPath(["shipping", "zip"])).toBe("shipping.zip");
  });

  it("says which required field is missing", () => {
    expect(() => parseInput(schema, {})).toThrowError(
      expect.objectContaining({ errorType: "request.validation.missing-name" }),
    );
  });

  it("says a field of the wrong type is invalid, not missing", () => {
    expect(() => parseInput(schema, { name: 5 })).toThrowError(
      expect.objectContaining({ errorType: "request.validation.invalid-name" }),
    );
    expect(() => parseInput(schema, { name: "ok", details: "x" })).toThrowError(
      expect.objectContaining({ errorType: "request.validation.invalid-details" }),
    );
  });

  it("names every invalid field, the metadata key included", () => {
    try {
      parseInput(schema, {
        name: "long",
        shipping: { zip: "123" },
        details: [{ name: "a" }, { name: 1 }],
        metadata: { ["k".repeat(41)]: "v" },
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ status: 400, errorType: "request.validation.invalid-name" });
      const names = (error as { invalidFields: { name: string }[] }).invalidFields.map((field) => field.name);
      expect(names).toEqual(["name", "shipping.zip", "details[1].name", `metadata.${"k".repeat(41)}`]);
    }
  });
});
