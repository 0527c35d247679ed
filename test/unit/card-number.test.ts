import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  cardNumberProblem,
  cvcLengths,
  detectScheme,
  iin,
  lastDigits,
  normalizeCardNumber,
  passesLuhn,
} from "../../shared/cards/card-number.ts";
import { SANDBOX_TEST_CARDS } from "../../shared/gateways/sandbox/test-cards.ts";

/** The Luhn check digit that completes `body`. */
function checkDigit(body: string): string {
  for (let digit = 0; digit <= 9; digit++) if (passesLuhn(`${body}${digit}`)) return String(digit);
  throw new Error("unreachable");
}

describe("the Luhn check", () => {
  it("accepts every test card of the reference", () => {
    for (const number of Object.keys(SANDBOX_TEST_CARDS)) expect(passesLuhn(number), number).toBe(true);
  });

  it("refuses a number whose check digit is wrong, and any single-digit typo (property)", () => {
    expect(passesLuhn("4242424242424241")).toBe(false);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9]{11,18}$/),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (body, at, shift) => {
          const valid = `${body}${checkDigit(body)}`;
          const position = at % valid.length;
          const changed = (Number(valid[position]) + shift) % 10;
          const typo = `${valid.slice(0, position)}${changed}${valid.slice(position + 1)}`;
          return passesLuhn(valid) && !passesLuhn(typo);
        },
      ),
    );
  });
});

describe("card number rules", () => {
  it("strips the spaces and dashes cards are written with", () => {
    expect(normalizeCardNumber("4242 4242-4242 4242")).toBe("4242424242424242");
  });

  it("takes 12 to 19 digits that pass Luhn, and says why it refuses the others without echoing them", () => {
    expect(cardNumberProblem("4242424242424242")).toBeUndefined();
    const twelve = `40000000000${checkDigit("40000000000")}`;
    const nineteen = `400000000000000000${checkDigit("400000000000000000")}`;
    expect(cardNumberProblem(twelve)).toBeUndefined();
    expect(cardNumberProblem(nineteen)).toBeUndefined();
    const eleven = `4000000000${checkDigit("4000000000")}`;
    const twenty = `4000000000000000000${checkDigit("4000000000000000000")}`;
    for (const [number, problem] of [
      [eleven, /12 to 19 digits/],
      [twenty, /12 to 19 digits/],
      ["4242424242424241", /check digit/],
      ["4242x42424242424", /only digits/],
    ] as const) {
      const message = cardNumberProblem(number);
      expect(message, number).toMatch(problem);
      expect(message).not.toContain(number);
    }
  });

  it("shows the first 6 and the last 4 digits, whatever the length", () => {
    expect(iin("378282246310005")).toBe("378282");
    expect(lastDigits("378282246310005")).toBe("0005");
    expect(iin("4242424242424242")).toBe("424242");
  });
});

describe("scheme detection", () => {
  it.each([
    ["4242424242424242", "visa"],
    ["4000000000000002", "visa"],
    ["5555555555554444", "mastercard"],
    ["2221000000000009", "mastercard"],
    ["2720999999999996", "mastercard"],
    ["378282246310005", "american-express"],
    ["340000000000009", "american-express"],
    ["30123456789019", "diners-club"],
    ["36227206271667", "diners-club"],
    ["3530111333300000", "jcb"],
    ["6011111111111117", "discover"],
    ["6445644564456445", "discover"],
    ["6221260000000000", "discover"],
    ["6200000000000005", "unionpay"],
  ])("reads %s as %s from its IIN range", (number, scheme) => {
    expect(detectScheme(number)).toBe(scheme);
  });

  it("leaves a valid number of no known range or length without a scheme", () => {
    const unknown = `90000000000000${checkDigit("90000000000000")}`;
    expect(cardNumberProblem(unknown)).toBeUndefined();
    expect(detectScheme(unknown)).toBeNull();
    // A Visa prefix on a length Visa does not issue is not a Visa.
    expect(detectScheme(`4000000000000${checkDigit("4000000000000")}`)).toBeNull();
  });

  it("asks 4 CVC digits of American Express, 3 of the other schemes, either of an unknown one", () => {
    expect(cvcLengths("american-express")).toEqual([4]);
    expect(cvcLengths("visa")).toEqual([3]);
    expect(cvcLengths(null)).toEqual([3, 4]);
  });
});
