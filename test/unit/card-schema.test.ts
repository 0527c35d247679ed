import { describe, expect, it } from "vitest";
import { parseCardInput } from "../../shared/cards/schema.ts";

const NOW = new Date("2026-06-15T12:00:00.000Z");
const valid = { number: "4242 4242 4242 4242", exp_month: "12", exp_year: "2030", cvc2: "123" };

function refusal(input: Record<string, unknown>, now = NOW) {
  try {
    parseCardInput(input, now);
  } catch (error) {
    return error as { status: number; errorType: string; message: string; invalidFields: { name: string }[] };
  }
  throw new Error("the input was accepted");
}

describe("card input", () => {
  it("reads a card from form strings or JSON values alike", () => {
    const expected = {
      number: "4242424242424242",
      scheme: "visa",
      expMonth: 12,
      expYear: 2030,
      cvc: "123",
      name: null,
      preferredScheme: null,
      metadata: {},
    };
    expect(parseCardInput(valid, NOW)).toEqual(expected);
    expect(parseCardInput({ ...valid, exp_month: 12, exp_year: 2030 }, NOW)).toEqual(expected);
  });

  it("reads two-digit years as 20xx", () => {
    expect(parseCardInput({ ...valid, exp_year: "30" }, NOW).expYear).toBe(2030);
    expect(parseCardInput({ ...valid, exp_year: 26 }, NOW).expYear).toBe(2026);
  });

  it("takes the CVC as cvc2 or, as mobile libraries send it, cvc; and no CVC at all", () => {
    const { cvc2, ...withoutCvc } = valid;
    expect(parseCardInput({ ...withoutCvc, cvc: "456" }, NOW).cvc).toBe("456");
    expect(parseCardInput(withoutCvc, NOW).cvc).toBeNull();
    expect(parseCardInput({ ...withoutCvc, cvc2: "" }, NOW).cvc).toBeNull();
  });

  it("asks four CVC digits of an American Express card and three of a Visa", () => {
    const amex = { ...valid, number: "378282246310005" };
    expect(parseCardInput({ ...amex, cvc2: "1234" }, NOW).cvc).toBe("1234");
    expect(refusal({ ...amex, cvc2: "123" }).invalidFields).toEqual([
      expect.objectContaining({ name: "cvc2" }),
    ]);
    expect(refusal({ ...valid, cvc2: "1234" }).errorType).toBe("request.validation.invalid-cvc2");
    expect(refusal({ ...valid, cvc2: "12a" }).errorType).toBe("request.validation.invalid-cvc2");
    const { cvc2, ...withoutCvc2 } = valid;
    expect(refusal({ ...withoutCvc2, cvc: "12" }).errorType).toBe("request.validation.invalid-cvc");
  });

  it("refuses a bad number with card.invalid-number naming number, never echoing it", () => {
    for (const number of ["4242424242424241", "1234", "4242-4242-4242-424x", 4242424242424242]) {
      const error = refusal({ ...valid, number });
      expect(error).toMatchObject({ status: 400, errorType: "card.invalid-number" });
      expect(error.invalidFields).toEqual([expect.objectContaining({ name: "number" })]);
      expect(JSON.stringify(error)).not.toContain("424242424242424");
    }
    expect(refusal({ ...valid, number: undefined }).errorType).toBe("request.validation.missing-number");
  });

  it("accepts a card until the end of its expiry month, then refuses it naming the field", () => {
    expect(parseCardInput({ ...valid, exp_month: 6, exp_year: 2026 }, NOW).expMonth).toBe(6);
    const lastMoment = new Date("2026-07-01T11:59:59.000Z"); // still June 30 at UTC-12
    expect(parseCardInput({ ...valid, exp_month: 6, exp_year: 2026 }, lastMoment).expYear).toBe(2026);
    const july = new Date("2026-07-01T12:00:01.000Z");
    expect(refusal({ ...valid, exp_month: 6, exp_year: 2026 }, july).invalidFields).toEqual([
      expect.objectContaining({ name: "exp_month", message: "the card has expired" }),
    ]);
    expect(refusal({ ...valid, exp_month: 12, exp_year: 2025 }).invalidFields).toEqual([
      expect.objectContaining({ name: "exp_year", message: "the card has expired" }),
    ]);
  });

  it.each([
    ["exp_month", { exp_month: "13" }, "request.validation.invalid-exp-month"],
    ["exp_month", { exp_month: "0" }, "request.validation.invalid-exp-month"],
    ["exp_month", { exp_month: undefined }, "request.validation.missing-exp-month"],
    ["exp_year", { exp_year: "203" }, "request.validation.invalid-exp-year"],
    ["exp_year", { exp_year: "2100" }, "request.validation.invalid-exp-year"],
    ["exp_year", { exp_year: undefined }, "request.validation.missing-exp-year"],
    ["name", { name: "n".repeat(256) }, "request.validation.invalid-name"],
    ["metadata.k", { metadata: { k: 1 } }, "request.validation.invalid-metadata"],
  ])("refuses a bad %s with a 400 naming it", (name, change, errorType) => {
    const error = refusal({ ...valid, ...change });
    expect(error).toMatchObject({ status: 400, errorType });
    expect(error.invalidFields).toEqual([expect.objectContaining({ name })]);
  });
});
